/* SPDX-License-Identifier: Apache-2.0 */
/*
 * h5_sources.c — nothing read from a file the user did not name
 * (h5_sources.h).
 */
#include "h5_sources.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_checks.h"

int gp_h5_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The dataset's name in its file ("/PartType1/Coordinates"). */
static const char *name_of(hid_t d, char *buf, size_t len)
{
    if (H5Iget_name(d, buf, len) <= 0) snprintf(buf, len, "(unnamed)");
    return buf;
}

int gp_h5_link_ok(hid_t loc, const char *name, const char *where, const char *path, char *err, size_t errlen)
{
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return 1;
    H5L_info_t info;
    if (H5Lget_info(loc, name, &info, H5P_DEFAULT) < 0)
        return gp_h5_fail(err, errlen, "Cannot look at %s in '%s': the file may be damaged.", where, path);
    if (info.type == H5L_TYPE_HARD) return 0;
    const char *kind = info.type == H5L_TYPE_EXTERNAL ? "an external link (to an object in another file)"
                     : info.type == H5L_TYPE_SOFT ? "a soft link (another name for an object)"
                     : "a user-defined link";
    return gp_h5_fail(err, errlen, "%s in '%s' is %s; gravplug reads only objects stored in the file under their own "
                "names, and never opens files the snapshot names: copy the data into the file (h5copy, or "
                "h5py's copy).", where, path, kind);
}

/* 0 when the dataset `dset` of the file at part (a part file beside the
 * master) is stored in that file: every link on its path hard, no external
 * storage, not virtual itself. */
static int part_dataset_ok(const char *part, const char *dset, const char *master, const char *vname,
                           char *err, size_t errlen)
{
    char why[160];
    FILE *fp = gp_file_open_regular(part, "rb", why, sizeof why);
    if (!fp)
        return gp_h5_fail(err, errlen, "Dataset %s of '%s' reads its rows from the part file '%s', which cannot be "
                    "opened: %s. A per-rank snapshot's master needs every part file (PREFIX_NNNN.rRRRR.h5) "
                    "beside it: copy them all together.", vname, master, part, why);
    fclose(fp);
    hid_t f = H5Fopen(part, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return gp_h5_fail(err, errlen, "Dataset %s of '%s' reads its rows from '%s', which is not a readable HDF5 file: "
                    "copy the part files again.", vname, master, part);
    int rc = 0;
    char *walk = strdup(dset);
    if (!walk) rc = gp_h5_fail(err, errlen, "Out of memory reading '%s'.", master);
    /* each name on the way: /A/B/C checks A, A/B, A/B/C */
    for (char *p = walk; rc == 0 && p && *p; ) {
        char *slash = strchr(p + 1, '/');
        if (slash) *slash = '\0';
        const char *sub = walk[0] == '/' && walk[1] ? walk + 1 : walk;
        if (sub[0] && strcmp(sub, "/") != 0) {
            int l = gp_h5_link_ok(f, sub, sub, part, err, errlen);
            if (l != 0) rc = l > 0 ? gp_h5_fail(err, errlen, "Dataset %s of '%s' reads %s of the part file '%s', "
                                          "which has none: copy the part files again.", vname, master, dset, part)
                                   : -1;
        }
        if (slash) *slash = '/';
        p = slash;
    }
    free(walk);
    if (rc == 0) {
        hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
        if (d < 0) {
            rc = gp_h5_fail(err, errlen, "Dataset %s of '%s' reads %s of the part file '%s', which cannot be opened: "
                      "copy the part files again.", vname, master, dset, part);
        } else {
            hid_t dcpl = H5Dget_create_plist(d);
            if (H5Pget_external_count(dcpl) != 0 || H5Pget_layout(dcpl) == H5D_VIRTUAL)
                rc = gp_h5_fail(err, errlen, "Dataset %s of the part file '%s' keeps its values in other files "
                          "(external storage or a virtual dataset), which gravplug never opens.", dset, part);
            H5Pclose(dcpl);
            H5Dclose(d);
        }
    }
    H5Fclose(f);
    return rc;
}

int gp_h5_dataset_ok(hid_t d, const char *path, char *err, size_t errlen)
{
    char name[256];
    hid_t dcpl = H5Dget_create_plist(d);
    if (dcpl < 0) return gp_h5_fail(err, errlen, "Cannot look at dataset %s in '%s': the file may be damaged.",
                              name_of(d, name, sizeof name), path);
    int rc = 0;
    int ext = H5Pget_external_count(dcpl);
    if (ext != 0) {
        char file[256] = "";
        off_t off;
        hsize_t size;
        if (ext > 0) H5Pget_external(dcpl, 0, sizeof file, file, &off, &size);
        rc = gp_h5_fail(err, errlen, "Dataset %s in '%s' keeps its values in other files (HDF5 external storage, "
                  "the first '%s'), which gravplug never opens: store the values in the file itself "
                  "(h5repack -l CONTI).", name_of(d, name, sizeof name), path, file);
    } else if (H5Pget_layout(dcpl) == H5D_VIRTUAL) {
        size_t count = 0;
        char *copy = strdup(path);
        const char *dir = copy ? dirname(copy) : ".";
        if (H5Pget_virtual_count(dcpl, &count) < 0)
            rc = gp_h5_fail(err, errlen, "Cannot look at virtual dataset %s in '%s': the file may be damaged.",
                      name_of(d, name, sizeof name), path);
        for (size_t i = 0; rc == 0 && i < count; ++i) {
            char file[256] = "", dset[256] = "", part[4096];
            ssize_t fl = H5Pget_virtual_filename(dcpl, i, file, sizeof file);
            ssize_t dl = H5Pget_virtual_dsetname(dcpl, i, dset, sizeof dset);
            if (fl <= 0 || dl <= 0 || (size_t)fl >= sizeof file || (size_t)dl >= sizeof dset) {
                rc = gp_h5_fail(err, errlen, "Virtual dataset %s in '%s' maps a file or dataset name gravplug cannot "
                          "read (empty or over 255 characters).", name_of(d, name, sizeof name), path);
            } else if (strcmp(file, ".") != 0 && (strchr(file, '/') || strchr(file, '%') || file[0] == '.')) {
                rc = gp_h5_fail(err, errlen, "Virtual dataset %s in '%s' maps the file '%s', which does not lie beside "
                          "it under a plain name; gravplug reads a virtual dataset's parts only from its own "
                          "folder (as a per-rank snapshot's master has them).", name_of(d, name, sizeof name),
                          path, file);
            } else {
                if (strcmp(file, ".") == 0) snprintf(part, sizeof part, "%s", path);
                else snprintf(part, sizeof part, "%s/%s", dir, file);
                rc = part_dataset_ok(part, dset, path, name_of(d, name, sizeof name), err, errlen);
            }
        }
        free(copy);
    }
    H5Pclose(dcpl);
    return rc;
}

int gp_h5_numeric(hid_t d, const char *path, char *err, size_t errlen)
{
    hid_t t = H5Dget_type(d);
    H5T_class_t c = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    if (t >= 0) H5Tclose(t);
    if (c == H5T_INTEGER || c == H5T_FLOAT) return 0;
    const char *what = c == H5T_STRING ? "strings"
                     : c == H5T_COMPOUND ? "compound records (as complex numbers are stored)"
                     : c == H5T_ARRAY ? "arrays in each element"
                     : c == H5T_ENUM ? "enumerated values"
                     : c == H5T_VLEN ? "variable-length sequences"
                     : c == H5T_BITFIELD ? "bit fields"
                     : c == H5T_OPAQUE ? "opaque bytes"
                     : c == H5T_REFERENCE ? "references"
                     : "values of an unknown type";
    char name[256];
    return gp_h5_fail(err, errlen, "Dataset %s in '%s' holds %s; gravplug reads numbers there (integer or floating "
                "point, such as float64).", name_of(d, name, sizeof name), path, what);
}

void gp_h5_read_failed(hid_t d, const char *path, const char *reason, char *err, size_t errlen)
{
    char name[256];
    name_of(d, name, sizeof name);
    hid_t dcpl = H5Dget_create_plist(d);
    unsigned flags = 0, conf = 0;
    size_t nv = 0;
    int checksummed = dcpl >= 0 && H5Pget_filter_by_id2(dcpl, H5Z_FILTER_FLETCHER32, &flags, &nv, NULL, 0, NULL,
                                                        &conf) >= 0;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (checksummed)
        gp_h5_fail(err, errlen, "Cannot read dataset %s from '%s': its Fletcher-32 checksum failed, so the file is "
             "damaged (HDF5: %s); copy the file again from where it came from.", name, path, reason);
    else
        gp_h5_fail(err, errlen, "Cannot read dataset %s from '%s': %s.", name, path, reason);
}
