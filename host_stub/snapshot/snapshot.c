/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.c — writes and reads HDF5 snapshots in the Gadget/SWIFT layout
 * (see snapshot.h for the layout).
 */
#include "snapshot.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <hdf5.h>

#include "file_checks.h"
#include "h5_sources.h"


/* HDF5 prints its error stack by default; silence it for one call. */
typedef struct quiet {
    H5E_auto2_t func;
    void *data;
} quiet;

static void quiet_begin(quiet *q)
{
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(const quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

/* The innermost HDF5 error description, for our sentences. */
static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc) snprintf((char *)data, 160, "%s", e->desc);
    return 0;
}

static const char *h5_reason(char *buf)
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, buf);
    if (!buf[0]) snprintf(buf, 160, "unknown HDF5 error");
    return buf;
}

/* ---- writing --------------------------------------------------------- */

static int attr(hid_t loc, const char *name, hid_t memtype, hid_t filetype, hsize_t count,
                const void *buf)
{
    hid_t space = count ? H5Screate_simple(1, &count, NULL) : H5Screate(H5S_SCALAR);
    if (space < 0) return -1;
    hid_t a = H5Acreate2(loc, name, filetype, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, memtype, buf) < 0 ? -1 : 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(space);
    return rc;
}

static int attr_double(hid_t loc, const char *name, double x)
{
    return attr(loc, name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 0, &x);
}

static int attr_int(hid_t loc, const char *name, int x)
{
    return attr(loc, name, H5T_NATIVE_INT, H5T_STD_I32LE, 0, &x);
}

/* One-element arrays, the form SWIFT gives its unit attributes. */
static int attr_double1(hid_t loc, const char *name, double x)
{
    return attr(loc, name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 1, &x);
}

static int attr_float1(hid_t loc, const char *name, double x)
{
    const float f = (float)x;
    return attr(loc, name, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, 1, &f);
}

static int attr_string(hid_t loc, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    H5Tset_size(t, strlen(s) ? strlen(s) : 1);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    int rc = attr(loc, name, t, t, 0, s);
    H5Tclose(t);
    return rc;
}

/* What a dataset measures: the powers of length, mass and time. */
typedef struct dims_lmt {
    int l, m, t;
    const char *description;
    const char *gadget3;   /* the same in Gadget-3's VarDescription words */
} dims_lmt;

/* PartType1's datasets. Gadget-3 readers (pynbody) take each U_x once,
 * its power after '^', negative after '/'. */
static const dims_lmt
    length = {1, 0, 0, "Co-moving position of the particles", "Positions of the particles in U_L"},
    velocity = {1, 0, -1, "Peculiar velocities of the particles", "Velocities of the particles in U_V"},
    massd = {0, 1, 0, "Masses of the particles", "Masses of the particles in U_M"},
    none = {0, 0, 0, "Unique IDs of the particles", "Unique IDs of the particles"},
    accel = {1, 0, -2, "Gravitational accelerations of the particles",
             "Gravitational accelerations of the particles in U_V^2 /U_L"},
    potential = {2, 0, -2, "Gravitational potentials of the particles",
                 "Gravitational potentials of the particles in U_V^2 per unit mass"};

/* The code units in cgs (t from G = 1), or all 0 in N-body units. */
typedef struct cgs_units {
    double L, M, T;
} cgs_units;

/* A dataset's units as SWIFT writes them ("U_L exponent", ..., with the
 * factor to cgs) and as Gadget-4 does (length_scaling, ..., to_cgs), so
 * pynbody, yt and swiftsimio read them; in N-body units the exponents
 * alone (no factor to cgs exists). */
static int dataset_units(hid_t d, const dims_lmt *u, const cgs_units *c)
{
    if (!u) return 0;
    int rc = 0;
    rc |= attr_float1(d, "U_L exponent", u->l);
    rc |= attr_float1(d, "U_M exponent", u->m);
    rc |= attr_float1(d, "U_t exponent", u->t);
    rc |= attr_float1(d, "U_I exponent", 0);
    rc |= attr_float1(d, "U_T exponent", 0);
    rc |= attr_float1(d, "a-scale exponent", 0);
    rc |= attr_float1(d, "h-scale exponent", 0);
    /* Gadget-4 counts velocity apart: L^l M^m t^t = L^(l+t) M^m V^(-t) */
    const double gl = u->l + u->t, gm = u->m, gv = -u->t;
    rc |= attr_double(d, "length_scaling", gl);
    rc |= attr_double(d, "mass_scaling", gm);
    rc |= attr_double(d, "velocity_scaling", gv);
    rc |= attr_double(d, "a_scaling", 0.0);
    rc |= attr_double(d, "h_scaling", 0.0);
    rc |= attr_double(d, "aexp-scale-exponent", 0.0);
    rc |= attr_double(d, "h-scale-exponent", 0.0);
    rc |= attr_string(d, "Description", u->description);
    if (c->L > 0) {
        double f = pow(c->L, u->l) * pow(c->M, u->m) * pow(c->T, u->t);
        rc |= attr_double1(d, "Conversion factor to CGS (not including cosmological corrections)", f);
        rc |= attr_double1(d, "Conversion factor to physical CGS (including cosmological corrections)", f);
        rc |= attr_double(d, "to_cgs", f);
        rc |= attr_double(d, "CGSConversionFactor", f);
        rc |= attr_string(d, "VarDescription", u->gadget3);
        char expr[96];
        int k = snprintf(expr, sizeof expr, "[");
        if (u->m) k += snprintf(expr + k, sizeof expr - (size_t)k, " g^%d", u->m);
        if (u->l) k += snprintf(expr + k, sizeof expr - (size_t)k, " cm^%d", u->l);
        if (u->t) k += snprintf(expr + k, sizeof expr - (size_t)k, " s^%d", u->t);
        snprintf(expr + k, sizeof expr - (size_t)k, "%s ]", u->l || u->m || u->t ? "" : " -");
        rc |= attr_string(d, "Expression for physical CGS units", expr);
    }
    return rc;
}

/* The particle datasets of a snapshot, in file order: one list for the
 * plain writer and the virtual master (which passes NULL data), so the two
 * cannot disagree on names, shapes or units. */
#define SNAPSHOT_FIELDS 6
typedef struct field {
    const char *name;
    int cols, ids;          /* ids: uint64 particle IDs, else doubles */
    const dims_lmt *units;
    const void *data;
} field;

static int snapshot_fields(const gp_snapshot_extra *extra, const double *pos, const double *vel,
                           const double *mass, const uint64_t *id, field f[SNAPSHOT_FIELDS])
{
    int n = 0;
    f[n++] = (field){"Coordinates", 3, 0, &length, pos};
    f[n++] = (field){"Velocities", 3, 0, &velocity, vel};
    f[n++] = (field){"Masses", 1, 0, &massd, mass};
    f[n++] = (field){"ParticleIDs", 1, 1, &none, id};
    if (extra && extra->acc) f[n++] = (field){"Acceleration", 3, 0, &accel, extra->acc};
    if (extra && extra->pot) f[n++] = (field){"Potential", 1, 0, &potential, extra->pot};
    return n;
}

static int dataset(hid_t grp, const char *name, hid_t memtype, hid_t filetype, size_t n, int cols,
                   const void *buf, const dims_lmt *u, const cgs_units *c)
{
    hsize_t dims[2] = {(hsize_t)n, (hsize_t)cols};
    hid_t space = H5Screate_simple(cols > 1 ? 2 : 1, dims, NULL);
    if (space < 0) return -1;
    hid_t d = H5Dcreate2(grp, name, filetype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d < 0 ? -1 : 0;
    if (rc == 0 && n > 0 && H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) rc = -1;
    if (rc == 0 && dataset_units(d, u, c) != 0) rc = -1;
    if (d >= 0) H5Dclose(d);
    H5Sclose(space);
    return rc;
}

static int write_header(hid_t file, double time, size_t n, const gp_snapshot_extra *x)
{
    hid_t h = H5Gcreate2(file, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (h < 0) return -1;
    uint64_t this_file[6] = {0, (uint64_t)n, 0, 0, 0, 0};
    uint32_t total[6] = {0, (uint32_t)((uint64_t)n & 0xffffffffu), 0, 0, 0, 0};
    uint32_t high[6] = {0, (uint32_t)((uint64_t)n >> 32), 0, 0, 0, 0};
    double mass_table[6] = {0, 0, 0, 0, 0, 0};
    /* GADGET's header fields that are constant for an N-body snapshot:
     * no cosmology, one file, 3-D, no gas physics, double precision */
    static const struct { const char *name; double value; } doubles[] = {
        {"Redshift", 0.0}, {"BoxSize", 0.0}, {"Omega0", 0.0}, {"OmegaLambda", 0.0}, {"HubbleParam", 1.0},
    };
    static const struct { const char *name; int value; } ints[] = {
        {"NumFilesPerSnapshot", 1}, {"Dimension", 3}, {"Flag_Sfr", 0},
        {"Flag_Cooling", 0}, {"Flag_Feedback", 0}, {"Flag_StellarAge", 0},
        {"Flag_Metals", 0}, {"Flag_Entropy_ICs", 0}, {"Flag_DoublePrecision", 1},
    };
    int rc = 0;
    rc |= attr_double(h, "Time", time);
    for (size_t k = 0; k < sizeof doubles / sizeof doubles[0]; ++k)
        rc |= attr_double(h, doubles[k].name, doubles[k].value);
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; ++k) rc |= attr_int(h, ints[k].name, ints[k].value);
    rc |= attr(h, "NumPart_ThisFile", H5T_NATIVE_UINT64, H5T_STD_U64LE, 6, this_file);
    rc |= attr(h, "NumPart_Total", H5T_NATIVE_UINT32, H5T_STD_U32LE, 6, total);
    rc |= attr(h, "NumPart_Total_HighWord", H5T_NATIVE_UINT32, H5T_STD_U32LE, 6, high);
    rc |= attr(h, "MassTable", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 6, mass_table);
    rc |= attr_string(h, "Code", "gravplug");
#ifdef GP_VERSION
    rc |= attr_string(h, "CodeVersion", GP_VERSION);
#endif
    if (x && x->comment) rc |= attr_string(h, "Comment", x->comment);
    H5Gclose(h);
    return rc ? -1 : 0;
}

static cgs_units code_units(const gp_snapshot_extra *x)
{
    cgs_units c = {0, 0, 0};
    if (x && x->length_cgs > 0 && x->mass_cgs > 0) {
        const double G_cgs = 6.67430e-8; /* CODATA 2018 */
        c.L = x->length_cgs;
        c.M = x->mass_cgs;
        c.T = sqrt(c.L * c.L * c.L / (G_cgs * c.M));
    }
    return c;
}

static int gadget_unit_names(hid_t loc, const cgs_units *c)
{
    return attr_double(loc, "UnitLength_in_cm", c->L) | attr_double(loc, "UnitMass_in_g", c->M)
           | attr_double(loc, "UnitVelocity_in_cm_per_s", c->L / c->T);
}

static int write_units(hid_t file, double time, const gp_snapshot_extra *x)
{
    hid_t u = H5Gcreate2(file, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (u < 0) return -1;
    int rc = 0;
    rc |= attr_double(u, "G", 1.0);
    const cgs_units c = code_units(x);
    if (c.L > 0) {
        const double L = c.L, M = c.M, T = c.T;
        rc |= attr_double1(u, "Unit length in cgs (U_L)", L);
        rc |= attr_double1(u, "Unit mass in cgs (U_M)", M);
        rc |= attr_double1(u, "Unit time in cgs (U_t)", T);
        rc |= attr_double1(u, "Unit current in cgs (U_I)", 1.0);
        rc |= attr_double1(u, "Unit temperature in cgs (U_T)", 1.0);
        rc |= attr_string(u, "System",
                          "physical: lengths, masses and times in the U_L, U_M, U_t above (cgs), "
                          "with G = 1 in these units");
        /* Gadget's names: Gadget-3 readers look in Units, Gadget-4 ones in
         * Parameters (pynbody, yt) */
        rc |= gadget_unit_names(u, &c);
        rc |= attr_double(u, "UnitTime_in_s", T);
        hid_t p = H5Gcreate2(file, "Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (p < 0) rc = -1;
        else {
            rc |= gadget_unit_names(p, &c);
            rc |= attr_double(p, "GravityConstantInternal", 1.0);
            /* pynbody's Gadget reader takes the time from here (else from a
             * cosmology this N-body model does not have) */
            rc |= attr_double(p, "Time_GYR", time * T / 3.15576e16);
            H5Gclose(p);
        }
    } else {
        rc |= attr_string(u, "System",
                          "N-body units: G = 1; lengths, masses and times are dimensionless "
                          "(scale them to physical units as you choose)");
    }
    H5Gclose(u);
    return rc ? -1 : 0;
}

/* 0 when a file of about bytes fits at path: under the file size limit
 * (ulimit -f) and in the space free on its file system; else -1 with why. */
static int snapshot_room(const char *path, double bytes, char *why, size_t len)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && bytes > (double)rl.rlim_cur) {
        snprintf(why, len, "it needs about %.0f bytes but files are limited to %llu bytes (ulimit -f)", bytes,
                 (unsigned long long)rl.rlim_cur);
        return -1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    else snprintf(dir, sizeof dir, ".");
    struct statvfs fs;
    if (statvfs(dir, &fs) == 0 && (double)fs.f_bavail * (double)fs.f_frsize < bytes) {
        snprintf(why, len, "it needs about %.0f bytes but %.120s has %.0f bytes free", bytes, dir,
                 (double)fs.f_bavail * (double)fs.f_frsize);
        return -1;
    }
    return 0;
}

/* PATH.tmp for path (malloc'd), or NULL with a sentence in err: no
 * memory, or a target a rename must not replace. */
static char *tmp_path_for(const char *path, char *err, size_t errlen)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 5);
    if (!tmp) {
        gp_h5_fail(err, errlen, "Out of memory writing snapshot '%s'.", path);
        return NULL;
    }
    snprintf(tmp, len + 5, "%s.tmp", path);
    char kind[128];
    const char *special = gp_file_rename_target_bad(path, tmp, kind, sizeof kind);
    if (special) {
        gp_h5_fail(err, errlen, "Cannot write snapshot '%s': %s.", special, kind);
        free(tmp);
        return NULL;
    }
    return tmp;
}

/* tmp created with its Header and Units: the file, or -1 with a sentence
 * (nothing left open). */
static hid_t begin_file(const char *tmp, double time, size_t n, const gp_snapshot_extra *extra,
                        char *err, size_t errlen)
{
    char why[160];
    /* H5Fcreate takes a path and would follow a link at tmp: the file is
     * made here, new and never through a link, and HDF5 opens that very
     * file by its descriptor's name (the core driver would hold the whole
     * snapshot in memory, and also writes by path) */
    int fd = gp_file_create_new(tmp, why, sizeof why);
    if (fd < 0) {
        gp_h5_fail(err, errlen, "Cannot create snapshot file '%s' (%s); check that the directory "
                          "exists and is writable.", tmp, why);
        return -1;
    }
    char by_fd[64];
    snprintf(by_fd, sizeof by_fd, "/proc/self/fd/%d", fd);
    hid_t file = H5Fcreate(by_fd, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    close(fd);   /* HDF5 holds its own descriptor of the file */
    if (file < 0) {
        gp_h5_fail(err, errlen, "Cannot create snapshot file '%s' (%s); check that the directory "
                          "exists and is writable.", tmp, h5_reason(why));
        return -1;
    }
    if (write_header(file, time, n, extra) != 0 || write_units(file, time, extra) != 0) {
        gp_h5_fail(err, errlen, "Cannot write the header of snapshot '%s': %s.", tmp, h5_reason(why));
        H5Fclose(file);
        return -1;
    }
    return file;
}

/* Closes file and renames tmp to path: 0, or -1 with a sentence. */
static int finish_file(hid_t file, const char *tmp, const char *path, char *err, size_t errlen)
{
    char why[160];
    if (H5Fclose(file) < 0)
        return gp_h5_fail(err, errlen, "Cannot finish snapshot file '%s' (%s); the disk may be full.", tmp,
                    h5_reason(why));
    if (rename(tmp, path) != 0)
        return gp_h5_fail(err, errlen, "Cannot rename '%s' to '%s': %s.", tmp, path, strerror(errno));
    return 0;
}

/* Writes one field of a snapshot's particle group (ctx: the writer's own). */
typedef int (*field_writer)(hid_t grp, const field *f, const cgs_units *c, const void *ctx);

/* The file a writer makes, at tmp, moved to path when whole: the header for
 * n particles, the group PartType1 with the fields f[0 .. nf) written by
 * write, then finish_file. 0, or -1 with tmp removed and a sentence in err
 * ("Cannot write <what> of snapshot ... (<HDF5's reason>)<hint>."). */
static int write_particle_file(const char *tmp, const char *path, double time, size_t n,
                               const gp_snapshot_extra *extra, const field *f, int nf, field_writer write,
                               const void *ctx, const char *what, const char *hint, char *err, size_t errlen)
{
    quiet q;
    quiet_begin(&q);
    char why[160];
    int rc = 0;
    hid_t file = begin_file(tmp, time, n, extra, err, errlen);
    if (file < 0) {
        rc = -1;
        goto out;
    }
    hid_t g = H5Gcreate2(file, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int drc = g < 0 ? -1 : 0;
    if (drc == 0) {
        const cgs_units c = code_units(extra);
        for (int k = 0; k < nf; ++k) drc |= write(g, &f[k], &c, ctx);
        H5Gclose(g);
    }
    if (drc != 0) {
        rc = gp_h5_fail(err, errlen, "Cannot write %s of snapshot '%s' (%s)%s.", what, tmp, h5_reason(why), hint);
        H5Fclose(file);
        goto out;
    }
    rc = finish_file(file, tmp, path, err, errlen);
out:
    quiet_end(&q);
    if (rc != 0) remove(tmp);
    return rc;
}

/* field_writer of a plain file: ctx is the particle count (size_t). */
static int write_plain(hid_t grp, const field *f, const cgs_units *c, const void *ctx)
{
    return dataset(grp, f->name, f->ids ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE,
                   f->ids ? H5T_STD_U64LE : H5T_IEEE_F64LE, *(const size_t *)ctx, f->cols, f->data, f->units, c);
}

GRAVPLUG_EXPORT int gp_snapshot_write_ex(const char *path, double time, size_t n,
                                         const double *pos, const double *vel,
                                         const double *mass, const uint64_t *id,
                                         const gp_snapshot_extra *extra,
                                         char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!path || !path[0]) return gp_h5_fail(err, errlen, "gp_snapshot_write needs a file path.");
    if (n > 0 && (!pos || !mass))
        return gp_h5_fail(err, errlen, "gp_snapshot_write needs positions and masses (pos or mass was NULL).");
    if (extra && extra->struct_size < sizeof(gp_snapshot_extra))
        return gp_h5_fail(err, errlen, "gp_snapshot_extra.struct_size is %zu, smaller than this library's "
                                 "%zu; set it to sizeof(gp_snapshot_extra).",
                    extra->struct_size, sizeof(gp_snapshot_extra));
    char *tmp = tmp_path_for(path, err, errlen);
    double *zeros = NULL;
    uint64_t *ids = NULL;
    if (!tmp) return -1;
    if (!vel && n > 0) zeros = calloc(3 * n, sizeof(double));
    if (!id && n > 0) {
        ids = malloc(n * sizeof(uint64_t));
        if (ids)
            for (size_t i = 0; i < n; ++i) ids[i] = i;
    }
    if ((!vel && n > 0 && !zeros) || (!id && n > 0 && !ids)) {
        free(tmp);
        free(zeros);
        free(ids);
        return gp_h5_fail(err, errlen, "Out of memory writing snapshot '%s'.", path);
    }
    /* HDF5 that fails to write (file size limit, full disk) leaves a file
     * id that crashes the library when the process exits: the room is
     * checked first, and only what this check cannot see reaches HDF5 */
    const double bytes = (double)n * (8.0 * (extra && extra->acc ? 11 : 8) + (extra && extra->pot ? 8 : 0)) + 65536.0;
    char room[256];
    if (snapshot_room(tmp, bytes, room, sizeof room) != 0) {
        int r = gp_h5_fail(err, errlen, "Cannot write snapshot '%s': %s.", path, room);
        free(tmp); free(zeros); free(ids);
        return r;
    }
    field f[SNAPSHOT_FIELDS];
    const int nf = snapshot_fields(extra, pos, vel ? vel : zeros, mass, id ? id : ids, f);
    int rc = write_particle_file(tmp, path, time, n, extra, f, nf, write_plain, &n, "the particles",
                                 "; the disk may be full", err, errlen);
    free(tmp);
    free(zeros);
    free(ids);
    return rc;
}

/* One virtual dataset of the master file: rows [off_f, off_f + counts[f])
 * come from dataset /PartType1/name of files[f]. */
static int virtual_dataset(hid_t grp, const char *name, hid_t filetype, int cols, size_t nfiles,
                           const uint64_t *counts, const char *const *files, uint64_t total,
                           const dims_lmt *u, const cgs_units *c)
{
    hsize_t dims[2] = {(hsize_t)total, (hsize_t)cols};
    hid_t vspace = H5Screate_simple(cols > 1 ? 2 : 1, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    int rc = vspace < 0 || dcpl < 0 ? -1 : 0;
    char src[64];
    snprintf(src, sizeof src, "/PartType1/%s", name);
    hsize_t off = 0;
    for (size_t f = 0; f < nfiles && rc == 0; ++f) {
        if (counts[f] == 0) continue;   /* an empty rank maps nothing */
        hsize_t start[2] = {off, 0}, count[2] = {(hsize_t)counts[f], (hsize_t)cols};
        hid_t sspace = H5Screate_simple(cols > 1 ? 2 : 1, count, NULL);
        if (sspace < 0 || H5Sselect_hyperslab(vspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0
            || H5Pset_virtual(dcpl, vspace, files[f], src, sspace) < 0)
            rc = -1;
        if (sspace >= 0) H5Sclose(sspace);
        off += counts[f];
    }
    if (rc == 0 && H5Sselect_all(vspace) < 0) rc = -1;
    hid_t d = rc == 0 ? H5Dcreate2(grp, name, filetype, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    if (d < 0) rc = -1;
    if (rc == 0 && dataset_units(d, u, c) != 0) rc = -1;
    if (d >= 0) H5Dclose(d);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (vspace >= 0) H5Sclose(vspace);
    return rc;
}

/* The part files a virtual master maps, in rank order. */
typedef struct virtual_parts {
    size_t nfiles;
    const uint64_t *counts;
    const char *const *files;
    uint64_t total;
} virtual_parts;

/* field_writer of a virtual master: ctx is the virtual_parts. */
static int write_virtual(hid_t grp, const field *f, const cgs_units *c, const void *ctx)
{
    const virtual_parts *v = ctx;
    return virtual_dataset(grp, f->name, f->ids ? H5T_STD_U64LE : H5T_IEEE_F64LE, f->cols, v->nfiles, v->counts,
                           v->files, v->total, f->units, c);
}

GRAVPLUG_EXPORT int gp_snapshot_write_virtual(const char *path, double time, size_t nfiles,
                                              const uint64_t *counts, const char *const *files,
                                              const gp_snapshot_extra *extra, char *err,
                                              size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!path || !path[0] || !counts || !files || nfiles == 0)
        return gp_h5_fail(err, errlen, "gp_snapshot_write_virtual needs a path and at least one part file.");
    if (extra && extra->struct_size < sizeof(gp_snapshot_extra))
        return gp_h5_fail(err, errlen, "gp_snapshot_extra.struct_size is %zu, smaller than this library's "
                                 "%zu; set it to sizeof(gp_snapshot_extra).",
                    extra->struct_size, sizeof(gp_snapshot_extra));
    uint64_t total = 0;
    for (size_t f = 0; f < nfiles; ++f) {
        if (!files[f] || !files[f][0])
            return gp_h5_fail(err, errlen, "gp_snapshot_write_virtual: part file %zu has no name.", f);
        total += counts[f];
    }
    char *tmp = tmp_path_for(path, err, errlen);
    if (!tmp) return -1;
    field f[SNAPSHOT_FIELDS];
    const int nf = snapshot_fields(extra, NULL, NULL, NULL, NULL, f);
    const virtual_parts parts = {nfiles, counts, files, total};
    int rc = write_particle_file(tmp, path, time, (size_t)total, extra, f, nf, write_virtual, &parts,
                                 "the virtual datasets", "", err, errlen);
    free(tmp);
    return rc;
}

GRAVPLUG_EXPORT int gp_snapshot_write(const char *path, double time, size_t n, const double *pos,
                                      const double *vel, const double *mass, const uint64_t *id,
                                      char *err, size_t errlen)
{
    return gp_snapshot_write_ex(path, time, n, pos, vel, mass, id, NULL, err, errlen);
}

/* ---- reading --------------------------------------------------------- */

/* Reads dataset `name` of grp as n x cols values of memtype into buf
 * (allocated here). Returns 0, 1 if the dataset is absent, -1 on error. */
static int read_dataset(hid_t grp, const char *name, hid_t memtype, size_t elsize, int cols,
                        size_t *n, void **buf, const char *path, char *err, size_t errlen)
{
    if (H5Lexists(grp, name, H5P_DEFAULT) <= 0) return 1;
    /* before HDF5 follows a link or opens what the dataset names */
    if (gp_h5_link_ok(grp, name, name, path, err, errlen) != 0) return -1;
    hid_t d = H5Dopen2(grp, name, H5P_DEFAULT);
    if (d < 0) return gp_h5_fail(err, errlen, "Cannot open dataset %s in '%s'.", name, path);
    if (gp_h5_dataset_ok(d, path, err, errlen) != 0 || gp_h5_numeric(d, path, err, errlen) != 0) {
        H5Dclose(d);
        return -1;
    }
    hid_t space = H5Dget_space(d);
    int rank = H5Sget_simple_extent_ndims(space);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space, dims, NULL);
    H5Sclose(space);
    int want_rank = cols > 1 ? 2 : 1;
    if (rank != want_rank || (cols > 1 && dims[1] != (hsize_t)cols)) {
        H5Dclose(d);
        return gp_h5_fail(err, errlen, "Dataset %s in '%s' has the wrong shape (rank %d); expected %s.", name,
                    path, rank, cols > 1 ? "n x 3" : "n values");
    }
    if (*n != (size_t)-1 && dims[0] != (hsize_t)*n) {
        H5Dclose(d);
        return gp_h5_fail(err, errlen, "Dataset %s in '%s' has %llu rows but Coordinates has %zu.", name,
                    path, (unsigned long long)dims[0], *n);
    }
    *n = (size_t)dims[0];
    size_t count = *n * (size_t)cols;
    *buf = malloc(count ? count * elsize : 1);
    if (!*buf) {
        H5Dclose(d);
        return gp_h5_fail(err, errlen, "Out of memory reading %s from '%s' (%zu values).", name, path, count);
    }
    /* HDF5 converts a negative signed integer to an unsigned one as 0, so a
     * signed dataset read as uint64 is read signed and a negative refused */
    hid_t ftype = H5Dget_type(d);
    const int signed_to_unsigned = H5Tequal(memtype, H5T_NATIVE_UINT64) > 0 && H5Tget_class(ftype) == H5T_INTEGER
                                   && H5Tget_sign(ftype) == H5T_SGN_2;
    /* and a float dataset read as uint64 (HDF5 would make 0.5 0 and NaN
     * 2^63) is read as double and taken only where exactly integral */
    const int float_to_unsigned = H5Tequal(memtype, H5T_NATIVE_UINT64) > 0 && H5Tget_class(ftype) == H5T_FLOAT;
    H5Tclose(ftype);
    hid_t readtype = signed_to_unsigned ? H5T_NATIVE_INT64 : float_to_unsigned ? H5T_NATIVE_DOUBLE : memtype;
    if (count > 0 && H5Dread(d, readtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *buf) < 0) {
        char why[160];
        gp_h5_read_failed(d, path, h5_reason(why), err, errlen);
        H5Dclose(d);
        free(*buf);
        *buf = NULL;
        return -1;
    }
    H5Dclose(d);
    for (size_t i = 0; signed_to_unsigned && i < count; ++i)
        if (((const int64_t *)*buf)[i] < 0) {
            long long v = ((const int64_t *)*buf)[i];
            free(*buf);
            *buf = NULL;
            return gp_h5_fail(err, errlen, "%s in '%s' holds %lld at row %zu; it must be >= 0.", name, path, v,
                        i / (size_t)cols);
        }
    for (size_t i = 0; float_to_unsigned && i < count; ++i) {
        double v = ((const double *)*buf)[i];
        if (!(v >= 0 && v < 18446744073709551616.0 && v == floor(v))) {
            free(*buf);
            *buf = NULL;
            return gp_h5_fail(err, errlen, "%s in '%s' holds %.17g at row %zu; it must hold whole numbers from 0 to "
                        "2^64-1 (floats only when exactly integral).", name, path, v, i / (size_t)cols);
        }
        ((uint64_t *)*buf)[i] = (uint64_t)v;
    }
    return 0;
}

/* Reads a numeric attribute of loc (scalar or array) into out[max]; returns
 * the number of values, or -1 if absent or unreadable. */
static int read_attr_doubles(hid_t loc, const char *name, double *out, int max)
{
    if (H5Aexists(loc, name) <= 0) return -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return -1;
    hid_t space = H5Aget_space(a);
    hssize_t np = H5Sget_simple_extent_npoints(space);
    H5Sclose(space);
    int rc = -1;
    if (np >= 1 && np <= 64) {
        double tmp[64];
        if (H5Aread(a, H5T_NATIVE_DOUBLE, tmp) >= 0) {
            rc = (int)np < max ? (int)np : max;
            memcpy(out, tmp, (size_t)rc * sizeof(double));
        }
    }
    H5Aclose(a);
    return rc;
}

GRAVPLUG_EXPORT int gp_snapshot_read_type(const char *path, int part_type, gp_ic *out,
                                          double *time, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return gp_h5_fail(err, errlen, "gp_snapshot_read needs somewhere to put the particles (out was NULL).");
    memset(out, 0, sizeof *out);
    if (!path || !path[0]) return gp_h5_fail(err, errlen, "gp_snapshot_read needs a file path.");
    if (part_type < 0 || part_type > 5)
        return gp_h5_fail(err, errlen, "Particle type %d does not exist; Gadget/SWIFT types are 0 to 5.", part_type);
    quiet q;
    quiet_begin(&q);
    char why[160];
    int rc = 0;
    double *pos = NULL, *vel = NULL, *mass = NULL;
    uint64_t *id = NULL;
    hid_t file = -1, grp = -1, hdr = -1;
    unsigned plugins = (unsigned)-1;
    /* a FIFO or a device first: HDF5 would open it blocking */
    FILE *fp = gp_file_open_regular(path, "rb", why, sizeof why);
    if (!fp) {
        rc = gp_h5_fail(err, errlen, "Cannot open snapshot '%s': %s.", path, why);
        goto out;
    }
    fclose(fp);
    if (H5Fis_hdf5(path) <= 0) {
        fp = fopen(path, "rb");
        if (!fp) rc = gp_h5_fail(err, errlen, "Cannot open snapshot '%s': %s.", path, strerror(errno));
        else {
            fclose(fp);
            rc = gp_h5_fail(err, errlen, "'%s' is not an HDF5 file (expected a gravplug/Gadget/SWIFT snapshot).", path);
        }
        goto out;
    }
    /* a filter HDF5 would load from HDF5_PLUGIN_PATH is code nobody named */
    H5PLget_loading_state(&plugins);
    H5PLset_loading_state(0);
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        rc = gp_h5_fail(err, errlen, "Cannot open snapshot '%s': %s.", path, h5_reason(why));
        goto out;
    }
    char gname[16];
    snprintf(gname, sizeof gname, "PartType%d", part_type);
    if (H5Lexists(file, gname, H5P_DEFAULT) <= 0) {
        rc = gp_h5_fail(err, errlen, "Snapshot '%s' has no group %s: it holds no particles of type %d, or "
                               "it is not a gravplug/Gadget/SWIFT snapshot.", path, gname, part_type);
        goto out;
    }
    int hdr_link = gp_h5_link_ok(file, "Header", "Header", path, err, errlen);
    if (gp_h5_link_ok(file, gname, gname, path, err, errlen) != 0 || hdr_link < 0) {
        rc = -1;
        goto out;
    }
    grp = H5Gopen2(file, gname, H5P_DEFAULT);
    if (hdr_link == 0) hdr = H5Gopen2(file, "Header", H5P_DEFAULT);
    size_t n = (size_t)-1;
    int r = read_dataset(grp, "Coordinates", H5T_NATIVE_DOUBLE, sizeof(double), 3, &n, (void **)&pos,
                         path, err, errlen);
    if (r == 1) rc = gp_h5_fail(err, errlen, "Snapshot '%s' has no %s/Coordinates.", path, gname);
    if (r != 0) { rc = -1; goto out; }
    r = read_dataset(grp, "Velocities", H5T_NATIVE_DOUBLE, sizeof(double), 3, &n, (void **)&vel, path,
                     err, errlen);
    if (r == 1) rc = gp_h5_fail(err, errlen, "Snapshot '%s' has no %s/Velocities.", path, gname);
    if (r != 0) { rc = -1; goto out; }
    r = read_dataset(grp, "Masses", H5T_NATIVE_DOUBLE, sizeof(double), 1, &n, (void **)&mass, path,
                     err, errlen);
    if (r < 0) { rc = -1; goto out; }
    if (r == 1) {
        double table[6];
        if (hdr < 0 || read_attr_doubles(hdr, "MassTable", table, 6) != 6 || !(table[part_type] > 0)) {
            rc = gp_h5_fail(err, errlen, "Snapshot '%s' has no %s/Masses and no positive Header/MassTable[%d].",
                      path, gname, part_type);
            goto out;
        }
        mass = malloc((n ? n : 1) * sizeof(double));
        if (!mass) { rc = gp_h5_fail(err, errlen, "Out of memory reading '%s'.", path); goto out; }
        for (size_t i = 0; i < n; ++i) mass[i] = table[part_type];
    }
    r = read_dataset(grp, "ParticleIDs", H5T_NATIVE_UINT64, sizeof(uint64_t), 1, &n, (void **)&id, path,
                     err, errlen);
    if (r < 0) { rc = -1; goto out; }
    if (r == 1) {
        id = malloc((n ? n : 1) * sizeof(uint64_t));
        if (!id) { rc = gp_h5_fail(err, errlen, "Out of memory reading '%s'.", path); goto out; }
        for (size_t i = 0; i < n; ++i) id[i] = i;
    }
    if (time) {
        double t = 0;
        if (hdr < 0 || read_attr_doubles(hdr, "Time", &t, 1) != 1) {
            rc = gp_h5_fail(err, errlen, "Snapshot '%s' has no Header/Time.", path);
            goto out;
        }
        *time = t;
    }
    out->n = n;
    out->pos = pos;
    out->vel = vel;
    out->mass = mass;
    out->id = id;
    pos = vel = mass = NULL;
    id = NULL;
out:
    if (hdr >= 0) H5Gclose(hdr);
    if (grp >= 0) H5Gclose(grp);
    if (file >= 0) H5Fclose(file);
    if (plugins != (unsigned)-1) H5PLset_loading_state(plugins);
    quiet_end(&q);
    free(pos);
    free(vel);
    free(mass);
    free(id);
    return rc;
}

GRAVPLUG_EXPORT int gp_snapshot_read(const char *path, gp_ic *out, double *time, char *err, size_t errlen)
{
    return gp_snapshot_read_type(path, 1, out, time, err, errlen);
}
