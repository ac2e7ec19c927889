/* SPDX-License-Identifier: Apache-2.0 */
/*
 * h5_sources.h — which files reading an HDF5 snapshot may open: the named
 * file, and for a per-rank master snapshot its parts beside it. HDF5 opens
 * on its own the files an external link, external storage or a virtual
 * dataset names, so a file could make gravplug read /etc/passwd's bytes as
 * coordinates, /dev/zero as zeros, or block for ever on a FIFO; each is
 * checked here before HDF5 follows it. Also what a dataset read from a
 * snapshot must hold (numbers), and what a failed read means.
 */
#ifndef GP_H5_SOURCES_H
#define GP_H5_SOURCES_H

#include <stddef.h>

#include <hdf5.h>

/* 0 when the link name of loc is a hard link (an object stored in this
 * file), 1 when there is none, -1 with a sentence (an external, soft or
 * user-defined link) naming it as where, in the file at path. */
int gp_h5_link_ok(hid_t loc, const char *name, const char *where, const char *path, char *err, size_t errlen);

/* 0 when the open dataset d, in the file at path, keeps its values in that
 * file; or, when virtual, maps only datasets stored in part files that lie
 * beside it under plain names (what gp_snapshot_write_virtual writes), each
 * a regular file. -1 with a sentence naming the dataset otherwise, or the
 * part file that is missing. */
int gp_h5_dataset_ok(hid_t d, const char *path, char *err, size_t errlen);

/* 0 when d holds integers or floating-point numbers; -1 with a sentence
 * naming the dataset and the type it holds (strings, compound records such
 * as complex numbers, ...). */
int gp_h5_numeric(hid_t d, const char *path, char *err, size_t errlen);

/* The sentence for a failed H5Dread of d, HDF5's reason given: a damaged
 * file when the dataset carries a Fletcher-32 checksum. */
void gp_h5_read_failed(hid_t d, const char *path, const char *reason, char *err, size_t errlen);

/* The snapshot readers' one way to fail: the sentence into err (when
 * errlen > 0), -1 returned. */
int gp_h5_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* GP_H5_SOURCES_H */
