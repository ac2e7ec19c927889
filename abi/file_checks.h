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

/* Creates path as a new file for writing (a write by rename's tmp): never
 * through a symbolic link and never into a file that is already there
 * (O_CREAT | O_EXCL | O_NOFOLLOW). One left at path (a run that died, or
 * a link someone else put in a shared directory) is unlinked first, which
 * removes a link, never its target. The descriptor, or -1 with a reason
 * in why. */
int gp_file_create_new(const char *path, char *why, size_t len);

/* Opens the log at path for writing (append: at its end), never through a
 * symbolic link (O_NOFOLLOW) and only as a regular file with one name. NULL
 * with a reason in why. */
FILE *gp_file_open_log(const char *path, int append, char *why, size_t len);

/* Opens the directory dir, itself no symbolic link (O_DIRECTORY |
 * O_NOFOLLOW), for a run to make every output relative to it: a swap of
 * dir mid-run then changes nothing. The descriptor, or -1 with a reason in
 * why. *shared is set when other users can change what is in it (writable
 * by all, or another user's), which docs/TRUST.md says to warn about. */
int gp_file_open_dir(const char *dir, int *shared, char *why, size_t len);

#endif /* GP_FILE_CHECKS_H */
