/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file_checks.h — which files gravplug opens. Data (configs, initial
 * conditions, checkpoints, logs, snapshots) is read and written only as
 * regular files: a FIFO would block the reader or writer for ever, and a
 * write by rename would replace a device node (as root, /dev/full became
 * a regular file). Part of libgravplug (hidden) and linked into gravhost.
 */
#ifndef GP_FILE_CHECKS_H
#define GP_FILE_CHECKS_H

#include <stddef.h>
#include <stdio.h>

/* Opens path for reading (mode "r" or "rb") when it is a regular file,
 * without blocking on a FIFO on the way. NULL with a reason in why
 * ("No such file or directory", "it is a FIFO, not a regular file", ...). */
FILE *gp_file_open_regular(const char *path, const char *mode, char *why, size_t len);

/* 0 when path may be written: absent, or a regular file; -1 with a reason
 * in why when it exists as something else (a directory, a FIFO, a device,
 * a socket). */
int gp_file_output_ok(const char *path, char *why, size_t len);

/* For a write by rename (tmp, then rename onto path): NULL when both may
 * be written, else the one that may not, with the reason in why. */
const char *gp_file_rename_target_bad(const char *path, const char *tmp, char *why, size_t len);

#endif /* GP_FILE_CHECKS_H */
