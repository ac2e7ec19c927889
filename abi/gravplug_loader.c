/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravplug_loader.c — dlopen-based plugin loader for hosts (see
 * gravplug_loader.h for the search order and the error policy).
 */
#include "gravplug_loader.h"
#include "mapped_file.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GP_BUILD_PLUGIN_DIR
#define GP_BUILD_PLUGIN_DIR ""
#endif
#ifndef GP_INSTALL_PLUGIN_DIR
#define GP_INSTALL_PLUGIN_DIR "/usr/local/lib/gravplug"
#endif

#define GP_PATH_MAX 4096
#define GP_MAX_DIRS 64

struct gp_plugin {
    void *handle;
    const gp_api *api;
    char path[GP_PATH_MAX];
};

GRAVPLUG_EXPORT const char *gp_param_type_name(gp_param_type t)
{
    switch (t) {
    case GP_PARAM_DOUBLE: return "double";
    case GP_PARAM_INT:    return "int";
    case GP_PARAM_BOOL:   return "bool";
    case GP_PARAM_ENUM:   return "enum";
    }
    return "?";
}

GRAVPLUG_EXPORT const char *gp_status_name(gp_status st)
{
    switch (st) {
    case GP_OK:                    return "GP_OK";
    case GP_ERR_INVALID_ARGUMENT:  return "GP_ERR_INVALID_ARGUMENT";
    case GP_ERR_BAD_STATE:         return "GP_ERR_BAD_STATE";
    case GP_ERR_OUT_OF_MEMORY:     return "GP_ERR_OUT_OF_MEMORY";
    case GP_ERR_DEVICE:            return "GP_ERR_DEVICE";
    case GP_ERR_UNSUPPORTED:       return "GP_ERR_UNSUPPORTED";
    case GP_ERR_UNKNOWN_PARAMETER: return "GP_ERR_UNKNOWN_PARAMETER";
    case GP_ERR_ABI_MISMATCH:      return "GP_ERR_ABI_MISMATCH";
    case GP_ERR_INTERNAL:          return "GP_ERR_INTERNAL";
    }
    return "GP_ERR_UNKNOWN";
}

static gp_status say(char *err, size_t errlen, gp_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static gp_status say(char *err, size_t errlen, gp_status st, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* ---- the search path ---------------------------------------------------- */

typedef struct dir_list {
    size_t n;
    char dir[GP_MAX_DIRS][GP_PATH_MAX];
} dir_list;

static void add_dir(dir_list *l, const char *d, size_t len)
{
    if (len == 0 || len >= GP_PATH_MAX || l->n >= GP_MAX_DIRS) return;
    while (len > 1 && d[len - 1] == '/') --len; /* "a/b/" == "a/b" */
    for (size_t k = 0; k < l->n; ++k)
        if (strlen(l->dir[k]) == len && strncmp(l->dir[k], d, len) == 0) return;
    memcpy(l->dir[l->n], d, len);
    l->dir[l->n][len] = '\0';
    ++l->n;
}

/* The directory holding libgravplug.so itself, via dladdr. */
static void add_library_dir(dir_list *l)
{
    Dl_info info;
    if (!dladdr((void *)&gp_plugin_open, &info) || !info.dli_fname) return;
    const char *slash = strrchr(info.dli_fname, '/');
    /* Only when the loader lives in libgravplug.so (not linked statically
     * into a program, where the directory would mean nothing). */
    if (!slash || strncmp(slash + 1, "libgravplug", 11) != 0) return;
    char d[GP_PATH_MAX];
    int k = snprintf(d, sizeof d, "%.*s/gravplug", (int)(slash - info.dli_fname), info.dli_fname);
    if (k > 0 && (size_t)k < sizeof d) add_dir(l, d, (size_t)k);
}

static void search_dirs(dir_list *l)
{
    l->n = 0;
    const char *env = getenv("GRAVPLUG_PATH");
    if (env) {
        const char *s = env;
        for (;;) {
            const char *c = strchr(s, ':');
            size_t len = c ? (size_t)(c - s) : strlen(s);
            add_dir(l, s, len);
            if (!c) break;
            s = c + 1;
        }
    }
    add_library_dir(l);
    add_dir(l, GP_BUILD_PLUGIN_DIR, strlen(GP_BUILD_PLUGIN_DIR));
    add_dir(l, GP_INSTALL_PLUGIN_DIR, strlen(GP_INSTALL_PLUGIN_DIR));
}

static size_t join_dirs(const dir_list *l, char *buf, size_t buflen)
{
    size_t need = 0;
    if (buf && buflen) buf[0] = '\0';
    for (size_t k = 0; k < l->n; ++k) {
        size_t dl = strlen(l->dir[k]);
        size_t add = dl + (k ? 1 : 0);
        if (buf && need + add < buflen) {
            if (k) buf[need] = ':';
            memcpy(buf + need + (k ? 1 : 0), l->dir[k], dl);
            buf[need + add] = '\0';
        }
        need += add;
    }
    return need;
}

GRAVPLUG_EXPORT size_t gp_plugin_search_path(char *buf, size_t buflen)
{
    dir_list *l = malloc(sizeof *l);
    if (!l) { if (buf && buflen) buf[0] = '\0'; return 0; }
    search_dirs(l);
    size_t need = join_dirs(l, buf, buflen);
    free(l);
    return need;
}

static int is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ---- the trust rules (docs/TRUST.md) ------------------------------------ */

/* Loading a plugin runs its code (its constructors run inside dlopen,
 * before any ABI check), so only a file nobody but its owner can rewrite
 * or swap is loaded. The file is opened once and everything is checked on
 * that descriptor, then the same descriptor is loaded: a path re-pointed
 * after the check changes nothing. */

/* The file itself: a regular file, owned by root or by the user, not
 * writable by every user. 0, or -1 with the reason in why. */
static int untrusted_file(const struct stat *st, char *why, size_t len)
{
    if (!S_ISREG(st->st_mode)) {
        snprintf(why, len, "it is not a regular file");
        return -1;
    }
    if (st->st_mode & S_IWOTH) {
        snprintf(why, len, "it is writable by every user, so anyone could replace its code");
        return -1;
    }
    if (st->st_uid != 0 && st->st_uid != geteuid()) {
        snprintf(why, len, "it belongs to user id %u, neither you nor root, so its owner could replace its code",
                 (unsigned)st->st_uid);
        return -1;
    }
    return 0;
}

/* Every directory from the file's own up to /: none writable by every
 * user, except, above the file's own, one with the sticky bit (as /tmp),
 * where nobody may rename or remove what others own. real is the file's
 * canonical path. 0, or -1 with the reason in why. */
static int untrusted_dirs(const char *real, char *why, size_t len)
{
    char dir[GP_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", real);
    for (int own = 1;; own = 0) {
        char *slash = strrchr(dir, '/');
        if (!slash) return 0;
        *(slash == dir ? slash + 1 : slash) = '\0';
        struct stat st;
        if (stat(dir, &st) != 0) {
            snprintf(why, len, "its directory %s cannot be checked (%s)", dir, strerror(errno));
            return -1;
        }
        if ((st.st_mode & S_IWOTH) && own) {
            snprintf(why, len, "its directory %s is writable by every user, so anyone could put other code "
                     "in its place", dir);
            return -1;
        }
        if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
            snprintf(why, len, "the directory %s above it is writable by every user without the sticky bit, "
                     "so anyone could swap the folders below it for others", dir);
            return -1;
        }
        if (slash == dir) return 0;
    }
}

/* The next name for descriptor fd. dlopen answers a name it has seen (an
 * object's name, or one added to it when the same file was opened again)
 * with that object, opening nothing, and plugins stay loaded (-z nodelete)
 * after their descriptor is closed and its number reused, so
 * "/proc/self/fd/N" alone may name an old plugin. Each call spells the
 * directory its own way, a serial number in binary as "/." and "/../fd"
 * steps (all of them /proc/self/fd): short names that this copy of the
 * loader never repeats (open_checked skips those another copy used). */
static void fd_name(char *buf, size_t len, int fd)
{
    static _Atomic unsigned long serial;
    unsigned long k = ++serial;
    size_t w = (size_t)snprintf(buf, len, "/proc/self/fd");
    for (; k && w < len; k >>= 1) w += (size_t)snprintf(buf + w, len - w, (k & 1) ? "/../fd" : "/.");
    if (w < len) snprintf(buf + w, len - w, "/%d", fd);
}

int gp_mapped_file(const void *addr, unsigned long *ino, char *path, size_t len)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return -1;
    char line[GP_PATH_MAX + 128];
    int rc = -1;
    uintptr_t at = (uintptr_t)addr;
    while (rc != 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, node;
        int name = 0;
        if (sscanf(line, "%lx-%lx %*s %*x %*x:%*x %lu %n", &lo, &hi, &node, &name) == 3 && at >= lo && at < hi) {
            rc = 0;
            if (ino) *ino = node;
            if (path && len) {
                size_t k = name > 0 ? strcspn(line + name, "\n") : 0;
                snprintf(path, len, "%.*s", (int)k, name > 0 ? line + name : "");
            }
        }
        if (!strchr(line, '\n')) { /* a line longer than the buffer: skip its rest */
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n') {}
        }
    }
    fclose(f);
    return rc;
}

/* Is the object behind handle mapped from the file fst describes? Its
 * dynamic section's mapping in /proc/self/maps, by inode (not by device:
 * overlayfs shows the layer's device there, fstat the overlay's). */
static int same_file(void *handle, const struct stat *fst)
{
    struct link_map *lm = NULL;
    unsigned long ino = 0;
    return dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm &&
           gp_mapped_file(lm->l_ld, &ino, NULL, 0) == 0 && ino == (unsigned long)fst->st_ino;
}

/* Was the object behind handle loaded under this name, i.e. mapped when
 * dlopen opened it (a fresh load under a name it did not know)? */
static int named(void *handle, const char *name)
{
    struct link_map *lm = NULL;
    return dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && strcmp(lm->l_name, name) == 0;
}

/* dlerror's text with the descriptor's name replaced by the user's path. */
static void shown_dlerror(const char *msg, const char *fdname, const char *path, char *out, size_t len)
{
    const char *at = msg ? strstr(msg, fdname) : NULL;
    if (!msg) snprintf(out, len, "dlopen failed");
    else if (!at) snprintf(out, len, "%s", msg);
    else snprintf(out, len, "%.*s%s%s", (int)(at - msg), msg, path, at + strlen(fdname));
}

static void *open_checked_at(const char *path, int depth, char *err, size_t errlen, gp_status *st);

/* A plugin is loaded through /proc/self/fd, so the dynamic linker takes
 * "/proc/self/fd" for its $ORIGIN, and a library its RUNPATH finds beside
 * it ($ORIGIN) is not found. When dlopen's msg names such a library
 * ("LIB: cannot open shared object file") and a file LIB lies in the
 * plugin's checked folder (real: the plugin's real path), that file is
 * loaded first, through the same checks and descriptor: the plugin's
 * NEEDED entry then matches its soname. 1 when it was loaded (and was not
 * the one loaded last time, *last), else 0 with hint: what to do. */
static int load_beside(const char *msg, const char *real, int depth, char *last, size_t last_len, char *hint,
                       size_t hint_len)
{
    hint[0] = '\0';
    const char *tail = msg ? strstr(msg, ": cannot open shared object file") : NULL;
    if (!tail) return 0;
    const char *lib = tail;
    while (lib > msg && !(lib[-1] == ' ' && lib - 1 > msg && lib[-2] == ':')) --lib;
    const char *slash = strrchr(real, '/');
    char dir[GP_PATH_MAX], file[GP_PATH_MAX + 256];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - real) : 0, real);
    snprintf(file, sizeof file, "%s/%.*s", dir, (int)(tail - lib), lib);
    struct stat sb;
    if (strchr(file + strlen(dir) + 1, '/') || stat(file, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    if (strcmp(file, last) != 0 && depth < 8) {
        char why[GP_PATH_MAX + 512];
        gp_status st;
        snprintf(last, last_len, "%s", file);
        if (open_checked_at(file, depth + 1, why, sizeof why, &st)) return 1;   /* stays loaded with the plugin */
        snprintf(hint, hint_len, "; %.*s lies beside it, but loading it failed: %s", (int)(tail - lib), lib, why);
        return 0;
    }
    snprintf(hint, hint_len, "; %.*s lies beside it, in %s, but has no soname that matches the plugin's "
             "need for it (gravplug loads plugins through /proc/self/fd, where $ORIGIN is not their folder, "
             "docs/TRUST.md): link the plugin with -Wl,-rpath,%s, or give the library the soname %.*s",
             (int)(tail - lib), lib, dir, dir, (int)(tail - lib), lib);
    return 0;
}

/* Opens path once, checks the file on that descriptor and every directory
 * above it, and dlopens that descriptor (glibc has no fdlopen: the
 * descriptor's /proc/self/fd entry under a name of its own, fd_name). The
 * object handed back is checked to be the file checked: one already
 * loaded by its inode (same_file), a fresh load by its name (named: it
 * was mapped from the descriptor), so a path re-pointed after the check
 * changes nothing. NULL with a sentence in
 * err and the status in *st. */
static void *open_checked(const char *path, char *err, size_t errlen, gp_status *st)
{
    return open_checked_at(path, 0, err, errlen, st);
}

/* open_checked for a plugin (depth 0) or a library beside it (load_beside). */
static void *open_checked_at(const char *path, int depth, char *err, size_t errlen, gp_status *st)
{
    *st = GP_ERR_INVALID_ARGUMENT;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        say(err, errlen, *st, "cannot open plugin '%s': %s; check the path, or give a short name "
            "like \"cpu-direct\"", path, strerror(errno));
        return NULL;
    }
    char why[GP_PATH_MAX + 200], fdname[512], real[GP_PATH_MAX];
    struct stat fst;
    ssize_t rl = -1;
    snprintf(fdname, sizeof fdname, "/proc/self/fd/%d", fd);
    if (fstat(fd, &fst) != 0)
        snprintf(why, sizeof why, "it cannot be examined (%s)", strerror(errno));
    else if (untrusted_file(&fst, why, sizeof why) == 0 &&
             (rl = readlink(fdname, real, sizeof real - 1)) <= 0)
        snprintf(why, sizeof why, "%s cannot be read (%s), and a plugin is loaded only through it; "
                 "mount /proc", fdname, rl < 0 ? strerror(errno) : "empty");
    if (rl > 0) {
        real[rl] = '\0';
        if (untrusted_dirs(real, why, sizeof why) != 0) rl = -1;
    }
    if (rl <= 0) {
        close(fd);
        say(err, errlen, *st, "refusing to load plugin '%s': %s; keep plugins in a directory only you "
            "(or root) can write, e.g. chmod o-w", path, why);
        return NULL;
    }
    /* A name dlopen already knows answers with its object: the file
     * itself when it is loaded already, else an old plugin that once had
     * the name (another copy of this loader, linked into a plugin, counts
     * its own serials). Such a name is skipped for the next one. */
    void *handle = NULL;
    int fresh = 0;
    char last[GP_PATH_MAX + 256] = "", hint[3 * GP_PATH_MAX];
    for (int tries = 0; tries < 64 && !handle; ++tries) {
        fd_name(fdname, sizeof fdname, fd);
        handle = dlopen(fdname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (handle && !same_file(handle, &fst)) {
            dlclose(handle);
            handle = NULL;
            continue;
        }
        if (handle) break;
        dlerror(); /* clear */
        handle = dlopen(fdname, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            char msg[GP_PATH_MAX + 512];
            shown_dlerror(dlerror(), fdname, path, msg, sizeof msg);
            if (load_beside(msg, real, depth, last, sizeof last, hint, sizeof hint)) continue;   /* again */
            close(fd);
            say(err, errlen, *st = GP_ERR_UNSUPPORTED, "cannot load %s '%s': %s%s", depth ? "library" : "plugin",
                path, msg, hint[0] ? hint : "; check that it was built for this machine and that the libraries "
                "it needs are installed");
            return NULL;
        }
        fresh = 1;
    }
    close(fd);
    if (!handle || (fresh && !named(handle, fdname))) {
        if (handle) dlclose(handle);
        say(err, errlen, *st = GP_ERR_INTERNAL, "refusing plugin '%s': the dynamic linker handed back "
            "another object than the file that was checked; please report this", path);
        return NULL;
    }
    *st = GP_OK;
    return handle;
}

/* The first of the members every plugin must fill that its table leaves
 * NULL, or NULL when none: the 1.0 layout, which hosts call without asking.
 * The appended members (1.1 on) may be NULL: GRAVPLUG_API_HAS asks. */
static const char *missing_member(const gp_api *api)
{
    const struct { const char *name; int null; } need[] = {
        { "name", !api->name },                   { "version", !api->version },
        { "describe_params", !api->describe_params }, { "init", !api->init },
        { "finalize", !api->finalize },           { "set_param", !api->set_param },
        { "get_param", !api->get_param },         { "set_particles", !api->set_particles },
        { "update_positions", !api->update_positions }, { "set_active_subset", !api->set_active_subset },
        { "compute_forces", !api->compute_forces }, { "compute_field", !api->compute_field },
        { "get_stats", !api->get_stats },         { "last_error", !api->last_error },
    };
    for (size_t k = 0; k < sizeof need / sizeof need[0]; ++k)
        if (need[k].null) return need[k].name;
    return NULL;
}

/* A short name is a plain word: letters, digits, '-', '_', '.'. */
static int valid_short_name(const char *name)
{
    if (!*name) return 0;
    for (const char *c = name; *c; ++c)
        if (!(( *c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
            return 0;
    return 1;
}

/* ---- open / close ------------------------------------------------------- */

GRAVPLUG_EXPORT gp_status gp_plugin_open(const char *name_or_path, gp_plugin **out,
                                         char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out)
        return say(err, errlen, GP_ERR_INVALID_ARGUMENT,
                   "gp_plugin_open was given a NULL out pointer; pass the "
                   "address of a gp_plugin *");
    *out = NULL;
    if (!name_or_path || !*name_or_path)
        return say(err, errlen, GP_ERR_INVALID_ARGUMENT,
                   "gp_plugin_open was given no plugin name; pass a short name "
                   "such as \"cpu-direct\" or a path to a gravplug-NAME.so file");

    gp_plugin *p = calloc(1, sizeof *p);
    if (!p)
        return say(err, errlen, GP_ERR_OUT_OF_MEMORY,
                   "gp_plugin_open: out of memory for a plugin handle");

    if (strchr(name_or_path, '/')) {
        if (strlen(name_or_path) >= sizeof p->path) {
            free(p);
            return say(err, errlen, GP_ERR_INVALID_ARGUMENT,
                       "gp_plugin_open: the path is longer than %d bytes", GP_PATH_MAX - 1);
        }
        if (!is_regular_file(name_or_path)) {
            free(p);
            return say(err, errlen, GP_ERR_INVALID_ARGUMENT,
                       "plugin file '%s' does not exist or is not a regular file; "
                       "check the path, or give a short name like \"cpu-direct\"",
                       name_or_path);
        }
        strcpy(p->path, name_or_path);
    } else {
        if (!valid_short_name(name_or_path)) {
            free(p);
            return say(err, errlen, GP_ERR_INVALID_ARGUMENT,
                       "'%s' is not a plugin name; a short name holds letters, "
                       "digits, '-', '_' or '.', e.g. \"cpu-direct\"", name_or_path);
        }
        dir_list *l = malloc(sizeof *l);
        if (!l) {
            free(p);
            return say(err, errlen, GP_ERR_OUT_OF_MEMORY,
                       "gp_plugin_open: out of memory for the folders to search for \"%s\"", name_or_path);
        }
        search_dirs(l);
        int found = 0;
        for (size_t k = 0; k < l->n && !found; ++k) {
            int w = snprintf(p->path, sizeof p->path, "%s/gravplug-%s.so", l->dir[k], name_or_path);
            if (w > 0 && (size_t)w < sizeof p->path && is_regular_file(p->path)) found = 1;
        }
        if (!found) {
            char dirs[2048];
            join_dirs(l, dirs, sizeof dirs);
            free(l);
            free(p);
            return say(err, errlen, GP_ERR_INVALID_ARGUMENT,
                       "no plugin named '%s': gravplug-%s.so is not in any of the "
                       "directories searched (%s); build it with `make`, install it "
                       "with `make install`, or add its directory to GRAVPLUG_PATH",
                       name_or_path, name_or_path, dirs[0] ? dirs : "none");
        }
        free(l);
    }

    gp_status lst;
    p->handle = open_checked(p->path, err, errlen, &lst);
    if (!p->handle) {
        free(p);
        return lst;
    }
    dlerror();
    void *sym = dlsym(p->handle, GRAVPLUG_ENTRY_SYMBOL);
    if (!sym) {
        gp_status st = say(err, errlen, GP_ERR_ABI_MISMATCH,
                           "'%s' is not a gravplug plugin: it has no '%s' symbol; "
                           "give the path of a gravplug-NAME.so file",
                           p->path, GRAVPLUG_ENTRY_SYMBOL);
        dlclose(p->handle);
        free(p);
        return st;
    }
    gravplug_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry); /* object -> function pointer, ISO-clean */
    const gp_api *api = entry(GRAVPLUG_ABI_MAJOR);
    gp_status st = GP_OK;
    if (!api)
        st = say(err, errlen, GP_ERR_ABI_MISMATCH,
                 "plugin '%s' does not speak gravplug ABI major version %d; "
                 "rebuild the plugin against this gravplug.h or use a host of "
                 "its version", p->path, GRAVPLUG_ABI_MAJOR);
    else if (api->abi_major != GRAVPLUG_ABI_MAJOR)
        st = say(err, errlen, GP_ERR_ABI_MISMATCH,
                 "plugin '%s' returned a table for ABI major version %u, not %d; "
                 "rebuild the plugin against this gravplug.h",
                 p->path, (unsigned)api->abi_major, GRAVPLUG_ABI_MAJOR);
    else if (api->struct_size < offsetof(gp_api, last_error) + sizeof api->last_error)
        st = say(err, errlen, GP_ERR_ABI_MISMATCH,
                 "plugin '%s' has a function table of %zu bytes, smaller than "
                 "the ABI %d.0 layout; rebuild the plugin against this gravplug.h",
                 p->path, api->struct_size, GRAVPLUG_ABI_MAJOR);
    const char *hole = st == GP_OK ? missing_member(api) : NULL;
    if (hole)
        st = say(err, errlen, GP_ERR_ABI_MISMATCH,
                 "plugin '%s' leaves the member %s of its gp_api table NULL, and every ABI %d.0 member "
                 "must be filled; fix the plugin's table or rebuild it against this gravplug.h",
                 p->path, hole, GRAVPLUG_ABI_MAJOR);
    if (st != GP_OK) {
        dlclose(p->handle);
        free(p);
        return st;
    }
    p->api = api;
    *out = p;
    return GP_OK;
}

GRAVPLUG_EXPORT const gp_api *gp_plugin_api(const gp_plugin *p) { return p ? p->api : NULL; }

GRAVPLUG_EXPORT const char *gp_plugin_path(const gp_plugin *p) { return p ? p->path : NULL; }

GRAVPLUG_EXPORT void gp_plugin_close(gp_plugin *p)
{
    if (!p) return;
    if (p->handle) dlclose(p->handle);
    free(p);
}

/* ---- listing ------------------------------------------------------------ */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Was this short name already reported from an earlier directory? */
static int seen_name(char **seen, size_t n, const char *name)
{
    for (size_t k = 0; k < n; ++k)
        if (strcmp(seen[k], name) == 0) return 1;
    return 0;
}

GRAVPLUG_EXPORT size_t gp_plugin_list(gp_plugin_visit_fn fn, void *user)
{
    dir_list *l = malloc(sizeof *l);
    if (!l) return 0;
    search_dirs(l);
    size_t reported = 0, n_seen = 0, cap_seen = 0;
    char **seen = NULL;
    int stop = 0;
    for (size_t k = 0; k < l->n && !stop; ++k) {
        DIR *d = opendir(l->dir[k]);
        if (!d) continue;
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len <= 12 || strncmp(e->d_name, "gravplug-", 9) != 0 ||
                strcmp(e->d_name + len - 3, ".so") != 0)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                char **nn = realloc(names, cap * sizeof *nn);
                if (!nn) break;
                names = nn;
            }
            names[n] = strdup(e->d_name);
            if (names[n]) ++n;
        }
        closedir(d);
        if (n) qsort(names, n, sizeof *names, by_name);
        for (size_t i = 0; i < n; ++i) {
            char shortname[256], path[GP_PATH_MAX];
            size_t len = strlen(names[i]);
            snprintf(shortname, sizeof shortname, "%.*s", (int)(len - 12), names[i] + 9);
            int w = snprintf(path, sizeof path, "%s/%s", l->dir[k], names[i]);
            if (!stop && w > 0 && (size_t)w < sizeof path && is_regular_file(path) &&
                !seen_name(seen, n_seen, shortname)) {
                if (n_seen == cap_seen) {   /* grown only when realloc succeeds */
                    size_t cap2 = cap_seen ? 2 * cap_seen : 16;
                    char **ns = realloc(seen, cap2 * sizeof *ns);
                    if (ns) { seen = ns; cap_seen = cap2; }
                }
                if (n_seen < cap_seen) {
                    seen[n_seen] = strdup(shortname);
                    if (seen[n_seen]) ++n_seen;
                }
                ++reported;
                if (fn && fn(path, shortname, user)) stop = 1;
            }
            free(names[i]);
        }
        free(names);
    }
    for (size_t k = 0; k < n_seen; ++k) free(seen[k]);
    free(seen);
    free(l);
    return reported;
}
