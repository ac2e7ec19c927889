/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mapped_file.h — which file a loaded object was mapped from, as
 * /proc/self/maps says. The loader loads plugins through "/proc/self/fd/N",
 * so dladdr's dli_fname names a descriptor long closed; this gives the
 * file itself (its inode, and its path to find files beside it). Defined in
 * gravplug_loader.c; not exported from libgravplug.
 */
#ifndef GP_MAPPED_FILE_H
#define GP_MAPPED_FILE_H

#include <stddef.h>

/* The inode (ino, may be NULL) and path (path[len], may be NULL; "" for an
 * anonymous mapping) of the mapping that holds addr. 0, or -1 when none
 * does or /proc is not mounted. */
int gp_mapped_file(const void *addr, unsigned long *ino, char *path, size_t len);

#endif /* GP_MAPPED_FILE_H */
