/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ckpt_path.h — a rank's checkpoint file, and on a restart, why it is
 * missing: gravhost (P = 1) and gravhost-mpi (any P) say the same thing
 * when the checkpoint there was written on another rank count.
 */
#ifndef GH_CKPT_PATH_H
#define GH_CKPT_PATH_H

#include <stddef.h>

/* Rank `rank` of `size`'s checkpoint file for base (size 1: base itself,
 * else base.RofP) into out[len]. On a restart (restart != 0) the file must
 * exist: when it does not, -1 with a sentence in err that names the rank
 * count whose files are there and how to restart them, or says no file. */
int gh_ckpt_path(const char *base, int rank, int size, int restart, char *out, size_t len, char *err,
                 size_t errlen);

#endif /* GH_CKPT_PATH_H */
