/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravplug_loader.h — find, open and check gravplug plugins (host side).
 *
 * Part of libgravplug.so (link with `pkg-config --libs gravplug`, or
 * -lgravplug -ldl). Every exported name starts with gp_.
 *
 * Finding a plugin
 *   gp_plugin_open accepts either a path (anything containing a '/', e.g.
 *   "./build/plugins/gravplug-cpu-direct.so") or a short name
 *   ("cpu-direct"). A short name NAME means the file gravplug-NAME.so,
 *   searched for, first match wins, in:
 *     1. each directory of the GRAVPLUG_PATH environment variable
 *        (colon-separated, like PATH; empty entries are skipped);
 *     2. LIBDIR/gravplug, where LIBDIR is the directory libgravplug.so was
 *        loaded from (so an installed library finds installed plugins even
 *        when moved to another prefix);
 *     3. the build tree this library was built in (build/plugins);
 *     4. the plugin directory of the PREFIX it was built for,
 *        $(PREFIX)/lib/gravplug.
 *   Duplicates are dropped. gp_plugin_search_path lists the directories.
 *
 * Opening a plugin
 *   The file is opened once and the trust checks (docs/TRUST.md) are made
 *   on that descriptor, before dlopen, since dlopen runs the library's
 *   constructors: a regular file owned by root or the user, not writable
 *   by every user, in a directory not writable by every user, below
 *   directories up to / that are not, or have the sticky bit; otherwise
 *   GP_ERR_INVALID_ARGUMENT. Then that descriptor is loaded,
 *   dlopen("/proc/self/fd/N", RTLD_NOW | RTLD_LOCAL) under a name no
 *   loaded object has, and the object is checked to be mapped from it;
 *   then dlsym("gravplug_entry"), then entry(GRAVPLUG_ABI_MAJOR). The
 *   table must report the same major version, a struct_size covering the
 *   1.0 layout and no NULL among the 1.0 members (name, version and the
 *   1.0 calls; GP_ERR_ABI_MISMATCH naming it). Each failure returns
 *   a status and writes a sentence into err (what went wrong, what to do):
 *   file not found (naming the directories searched), dlopen's own message,
 *   not a gravplug plugin (no entry symbol), ABI major mismatch.
 *   Because of RTLD_LOCAL, any number of plugins load side by side, and the
 *   same file may be opened twice (dlopen reference-counts it).
 *
 * Threads
 *   gp_plugin_open / gp_plugin_close may be called from any thread; the
 *   loader's only global state is an atomic counter that names each load
 *   (it reads GRAVPLUG_PATH with getenv at each call). A gp_plugin handle may be shared between threads
 *   once opened: gp_plugin_api and gp_plugin_path only read it.
 *
 * Ownership
 *   The gp_plugin handle belongs to the caller until gp_plugin_close. The
 *   gp_api table and every string returned by the plugin stay valid until
 *   gp_plugin_close; finalize every instance before closing its plugin.
 */
#ifndef GRAVPLUG_LOADER_H
#define GRAVPLUG_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An opened plugin: the dlopen handle, its path, its function table. */
typedef struct gp_plugin gp_plugin;

/* Opens a plugin by path or short name (see above). On success *out holds
 * the handle and GP_OK is returned. On failure *out is NULL, a status is
 * returned and, when err is not NULL, a NUL-terminated sentence is written
 * to err (errlen bytes; 1024 is plenty):
 *   GP_ERR_INVALID_ARGUMENT  NULL arguments, or no such file (the sentence
 *                            lists the directories searched);
 *   GP_ERR_UNSUPPORTED       dlopen refused the file (its message quoted:
 *                            e.g. a missing libcudart, wrong architecture);
 *   GP_ERR_ABI_MISMATCH      not a gravplug plugin (no gravplug_entry), it
 *                            does not speak this ABI major version, or its
 *                            table leaves a 1.0 member NULL;
 *   GP_ERR_OUT_OF_MEMORY;
 *   GP_ERR_INTERNAL          no free descriptor, or the dynamic linker
 *                            handed back another object than the file. */
GRAVPLUG_EXPORT gp_status gp_plugin_open(const char *name_or_path, gp_plugin **out,
                                         char *err, size_t errlen);

/* The plugin's function table (never NULL for an open plugin). */
GRAVPLUG_EXPORT const gp_api *gp_plugin_api(const gp_plugin *p);

/* The path the plugin was found at (as given or found on the search
 * path, not canonicalised; it was loaded through the descriptor opened
 * there). */
GRAVPLUG_EXPORT const char *gp_plugin_path(const gp_plugin *p);

/* Closes the plugin (dlclose) and frees the handle. NULL is a no-op. Every
 * instance created through it must be finalized first. */
GRAVPLUG_EXPORT void gp_plugin_close(gp_plugin *p);

/* Calls fn(path, user) once for every file named gravplug-*.so found on the
 * search path, in search order, directories in order and files sorted by
 * name within a directory. A name that appears in several directories is
 * reported once, for the first directory (the one gp_plugin_open would
 * use). The short name is the file name without "gravplug-" and ".so".
 * fn returns 0 to continue, non-zero to stop. Returns the number of files
 * reported. Files are not opened: call gp_plugin_open to check them. */
typedef int (*gp_plugin_visit_fn)(const char *path, const char *short_name, void *user);
GRAVPLUG_EXPORT size_t gp_plugin_list(gp_plugin_visit_fn fn, void *user);

/* Choosing a plugin by what it says it is, for a host that names none
 * ("auto"): plugins are ranked by gp_plugin_preference of their
 * gp_api.capabilities, higher first: an approximate (GP_CAP_TREE) solver
 * before an exact one, since it wins at large n, then on a GPU
 * (GP_CAP_GPU) before the CPU. Plugins of equal rank keep the search
 * order. No host keeps a list of plugin names. */
GRAVPLUG_EXPORT int gp_plugin_preference(uint64_t capabilities);

/* Calls fn(path, short_name, capabilities, user) for every plugin on the
 * search path (gp_plugin_list) whose capabilities hold every bit of need
 * and none of refuse, best first as above; fn returns 0 to go on,
 * non-zero to stop. Each file is opened (gp_plugin_open: its trust checks
 * apply, a file that fails them is left out) to read its capabilities,
 * and closed again; no instance is made, so a GPU plugin is listed on a
 * machine without a GPU and fails at init. Returns how many were
 * reported. */
typedef int (*gp_plugin_choice_fn)(const char *path, const char *short_name, uint64_t capabilities,
                                   void *user);
GRAVPLUG_EXPORT size_t gp_plugin_list_preferred(uint64_t need, uint64_t refuse,
                                                gp_plugin_choice_fn fn, void *user);

/* Writes the search directories, colon-separated, into buf (buflen bytes).
 * Returns the length needed (like snprintf). */
GRAVPLUG_EXPORT size_t gp_plugin_search_path(char *buf, size_t buflen);

/* The name of a status code, e.g. "GP_ERR_BAD_STATE"; "GP_ERR_UNKNOWN"
 * for a value outside the enum. Static storage. */
GRAVPLUG_EXPORT const char *gp_status_name(gp_status st);

/* "double", "int", "bool" or "enum" for a parameter's type ("?" if none). */
GRAVPLUG_EXPORT const char *gp_param_type_name(gp_param_type t);

#ifdef __cplusplus
}
#endif

#endif /* GRAVPLUG_LOADER_H */
