/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot-roundtrip.t — HDF5 snapshots: what gp_snapshot_write stores,
 * gp_snapshot_read gives back bit for bit (with the time), NULL velocities
 * and IDs get their documented defaults, the `snapshot` IC model reads a
 * file, and bad paths and non-snapshot files are refused with sentences.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ic.h"
#include "snapshot.h"
#include "tap.h"

static char dir[] = "/tmp/gp-snapshot-XXXXXX";

static const char *path_in(const char *name)
{
    static char buf[4][512];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static int same(const gp_ic *a, const gp_ic *b)
{
    return a->n == b->n && !memcmp(a->pos, b->pos, 3 * a->n * sizeof(double)) &&
           !memcmp(a->vel, b->vel, 3 * a->n * sizeof(double)) &&
           !memcmp(a->mass, b->mass, a->n * sizeof(double)) && !memcmp(a->id, b->id, a->n * sizeof(uint64_t));
}

int main(void)
{
    plan(14);
    if (!mkdtemp(dir)) bail("cannot create a temporary directory");
    char err[512];
    gp_ic ic, back;
    double t = -1;
    if (gp_ic_make("plummer", 3000, 5, NULL, &ic, err, sizeof err) != 0) bail(err);
    for (size_t i = 0; i < ic.n; ++i) ic.id[i] = 1000000007ULL * (i + 1); /* ids above 2^32 */

    const char *p = path_in("snap.h5");
    int rc = gp_snapshot_write(p, 1.25, ic.n, ic.pos, ic.vel, ic.mass, ic.id, err, sizeof err);
    ok(rc == 0, "writes a 3000-particle snapshot%s%s", rc ? ": " : "", rc ? err : "");
    ok(access(path_in("snap.h5.tmp"), F_OK) != 0, "leaves no temporary file behind");
    rc = gp_snapshot_read(p, &back, &t, err, sizeof err);
    ok(rc == 0 && same(&ic, &back) && t == 1.25, "reads it back bit for bit, with Time = 1.25%s%s",
       rc ? ": " : "", rc ? err : "");
    gp_ic_free(&back);

    gp_ic viaic;
    gp_param kv[1] = {{"path", p}};
    gp_ic_opts o = {kv, 1};
    rc = gp_ic_make("snapshot", 0, 0, &o, &viaic, err, sizeof err);
    ok(rc == 0 && same(&ic, &viaic), "the 'snapshot' IC model reads the same particles%s%s", rc ? ": " : "",
       rc ? err : "");
    gp_ic_free(&viaic);
    rc = gp_ic_make("snapshot", 10, 0, &o, &viaic, err, sizeof err);
    ok(rc != 0 && strstr(err, "holds 3000 particles"), "the snapshot model refuses a count that differs: %s", err);

    /* Overwriting keeps one valid file. */
    rc = gp_snapshot_write(p, 2.5, 10, ic.pos, ic.vel, ic.mass, ic.id, err, sizeof err);
    rc |= gp_snapshot_read(p, &back, &t, err, sizeof err);
    ok(rc == 0 && back.n == 10 && t == 2.5, "overwrites an existing snapshot");
    gp_ic_free(&back);

    /* Defaults for NULL velocities and ids. */
    p = path_in("noid.h5");
    rc = gp_snapshot_write(p, 0, 5, ic.pos, NULL, ic.mass, NULL, err, sizeof err);
    rc |= gp_snapshot_read(p, &back, NULL, err, sizeof err);
    int good = rc == 0 && back.n == 5;
    for (size_t i = 0; good && i < 5; ++i)
        good = back.id[i] == i && back.vel[3 * i] == 0 && back.vel[3 * i + 2] == 0;
    ok(good, "NULL velocities are stored as zeros, NULL ids as 0..n-1");
    gp_ic_free(&back);

    /* Empty snapshot. */
    p = path_in("empty.h5");
    rc = gp_snapshot_write(p, 0, 0, NULL, NULL, NULL, NULL, err, sizeof err);
    rc |= gp_snapshot_read(p, &back, NULL, err, sizeof err);
    ok(rc == 0 && back.n == 0, "an empty snapshot (n = 0) round-trips");
    gp_ic_free(&back);

    /* Extras: units and potentials. */
    p = path_in("ex.h5");
    double *pot = malloc(ic.n * sizeof *pot);
    for (size_t i = 0; i < ic.n; ++i) pot[i] = -1.0 - (double)i;
    gp_snapshot_extra x = {sizeof x, 3.0857e21, 1.989e43, ic.vel, pot, "test comment"};
    rc = gp_snapshot_write_ex(p, 3, ic.n, ic.pos, ic.vel, ic.mass, ic.id, &x, err, sizeof err);
    ok(rc == 0, "writes units, accelerations, potentials and a comment%s%s", rc ? ": " : "", rc ? err : "");
    free(pot);
    x.struct_size = 8;
    rc = gp_snapshot_write_ex(p, 3, ic.n, ic.pos, ic.vel, ic.mass, ic.id, &x, err, sizeof err);
    ok(rc != 0 && strstr(err, "struct_size"), "refuses a too-small gp_snapshot_extra: %s", err);

    /* Refusals. */
    rc = gp_snapshot_write("/nonexistent/dir/s.h5", 0, ic.n, ic.pos, ic.vel, ic.mass, ic.id, err, sizeof err);
    ok(rc != 0 && strstr(err, "Cannot create"), "refuses an unwritable path: %s", err);
    rc = gp_snapshot_read(path_in("missing.h5"), &back, NULL, err, sizeof err);
    ok(rc != 0 && back.n == 0 && strstr(err, "Cannot open"), "refuses a missing file: %s", err);
    FILE *fp = fopen(path_in("text.h5"), "w");
    if (fp) {
        fputs("not hdf5\n", fp);
        fclose(fp);
    }
    rc = gp_snapshot_read(path_in("text.h5"), &back, NULL, err, sizeof err);
    ok(rc != 0 && strstr(err, "not an HDF5 file"), "refuses a file that is not HDF5: %s", err);
    rc = gp_snapshot_read_type(path_in("snap.h5"), 0, &back, NULL, err, sizeof err);
    ok(rc != 0 && strstr(err, "no group PartType0"), "refuses a particle type the file lacks: %s", err);

    gp_ic_free(&ic);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) diag("could not remove %s", dir);
    return done_testing();
}
