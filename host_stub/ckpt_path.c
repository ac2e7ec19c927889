/* SPDX-License-Identifier: Apache-2.0 */
/* ckpt_path.c — see ckpt_path.h. */
#include "ckpt_path.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rank count whose checkpoint files exist for base, or 0. */
static int written_by(const char *base)
{
    if (access(base, R_OK) == 0) return 1;
    char pat[4200];
    snprintf(pat, sizeof pat, "%s.0of*", base);
    glob_t g;
    int q = 0;
    if (glob(pat, 0, NULL, &g) == 0) {
        if (g.gl_pathc > 0) q = atoi(g.gl_pathv[0] + strlen(base) + 4);
        globfree(&g);
    }
    return q;
}

int gh_ckpt_path(const char *base, int rank, int size, int restart, char *out, size_t len, char *err,
                 size_t errlen)
{
    if (size == 1) snprintf(out, len, "%s", base);
    else snprintf(out, len, "%s.%dof%d", base, rank, size);
    if (!restart || access(out, R_OK) == 0) return 0;
    int q = written_by(base);
    if (q > 1 && q != size)
        snprintf(err, errlen, "%s: no checkpoint for %d rank%s (%s is missing), but one written on %d ranks: a "
                 "checkpoint restarts only on the rank count that wrote it (each rank's file holds that rank's "
                 "particles); restart it with gravhost-mpi on %d ranks (mpirun -np %d gravhost-mpi run ... "
                 "--restart)", base, size, size > 1 ? "s" : "", out, q, q, q);
    else if (q == 1 && size > 1)
        snprintf(err, errlen, "%s: no checkpoint for %d ranks (%s is missing), but one written on 1 rank: a "
                 "checkpoint restarts only on the rank count that wrote it; restart it with gravhost (without "
                 "mpirun, or mpirun -np 1)", base, size, out);
    else
        snprintf(err, errlen, "cannot read the checkpoint %s: no such file; check the path or the output directory",
                 out);
    return -1;
}
