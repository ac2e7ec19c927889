/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom-inject.c — an LD_PRELOAD library that makes one allocation fail, so
 * that a test can walk a program through every out-of-memory path of the
 * project's own code (tests/gravhost-oom.sh, tests/oom-conformance.sh).
 *
 * Only allocations called from the project's objects count: the caller's
 * return address must lie in a file whose name holds one of the words of
 * GP_OOM_OBJECTS (default "gravplug gravhost": libgravplug.so, the
 * plugins, gravhost). Failing an allocation inside libc, libgomp or HDF5
 * would test those libraries, and some of them abort by design; so does
 * the CUDA runtime linked statically into the CUDA plugins, which a
 * sweep therefore leaves out by naming the CPU plugins alone.
 *
 *   GP_OOM_FAIL_AT=k      the k-th counted allocation (1-based) returns
 *                         NULL with errno = ENOMEM; every other succeeds.
 *                         0 or unset: none fails.
 *   GP_OOM_COUNT_FILE=f   at exit, the number of counted allocations is
 *                         written to f (how far a sweep has to go).
 *   GP_OOM_TRACE=1        the failing allocation's call stack goes to
 *                         stderr (where a sweep's finding is).
 *   GP_OOM_CALLER=name    instead of the k-th: the first counted allocation
 *                         made directly by the function of that name fails
 *                         (an exported function: dladdr names no other).
 *   GP_OOM_RANK=r         only in the MPI process of rank r (Open MPI's
 *                         OMPI_COMM_WORLD_RANK): one rank failing alone.
 *
 * The real allocators are glibc's __libc_* entry points: dlsym would
 * itself allocate on its first call. strdup and strndup are caught here
 * too, since inside libc their malloc has libc as its caller.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong counted;
static unsigned long fail_at;
static int armed = -1;   /* -1: environment not read yet; 0: this process fails nothing */
static const char *fail_caller;
static atomic_int caller_failed;

/* GP_OOM_OBJECTS split into words once, when armed (every allocation of
 * the process asks ours()). */
static char objects[512] = "gravplug gravhost";
static const char *words[32];
static int n_words;

static void split_objects(void)
{
    n_words = 0;
    for (char *w = strtok(objects, " "); w && n_words < 32; w = strtok(NULL, " ")) words[n_words++] = w;
}

/* gravplug's loader loads a plugin through its descriptor, so dladdr names
 * it "/proc/self/fd/..."; the file it was mapped from is in
 * /proc/self/maps, read here with plain system calls (nothing allocated)
 * and remembered by the object's base address. */
static struct { const void *base; char name[256]; } mapped[64];
static int n_mapped;
static atomic_flag mapped_lock = ATOMIC_FLAG_INIT;

static void maps_name(const void *base, char *out, size_t len)
{
    out[0] = '\0';
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[8192], line[4352];
    size_t used = 0;
    ssize_t got;
    while (!out[0] && (got = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t k = 0; k < got && !out[0]; ++k) {
            if (buf[k] != '\n') {
                if (used + 1 < sizeof line) line[used++] = buf[k];
                continue;
            }
            line[used] = '\0';
            used = 0;
            unsigned long lo = strtoul(line, NULL, 16);
            const char *path = strchr(line, '/');
            if ((const void *)lo == base && path) snprintf(out, len, "%s", path);
        }
    }
    close(fd);
}

static const char *object_name(const Dl_info *info)
{
    if (strncmp(info->dli_fname, "/proc/self/", 11) != 0) return info->dli_fname;
    while (atomic_flag_test_and_set(&mapped_lock)) {}
    const char *name = info->dli_fname;
    int k = 0;
    while (k < n_mapped && mapped[k].base != info->dli_fbase) ++k;
    if (k == n_mapped && k < 64) {
        maps_name(info->dli_fbase, mapped[k].name, sizeof mapped[k].name);
        mapped[k].base = info->dli_fbase;
        ++n_mapped;
    }
    if (k < n_mapped && mapped[k].name[0]) name = mapped[k].name;
    atomic_flag_clear(&mapped_lock);
    return name;
}

static int ours(const void *caller, Dl_info *info)
{
    if (!dladdr(caller, info) || !info->dli_fname) return 0;
    const char *file = object_name(info);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    for (int i = 0; i < n_words; ++i)
        if (strstr(base, words[i])) return 1;
    return 0;
}

/* 1 when this allocation, made from `caller`, is the one to fail. */
static int should_fail(const void *caller)
{
    if (armed < 0) {   /* getenv does not allocate */
        const char *s = getenv("GP_OOM_FAIL_AT"), *o = getenv("GP_OOM_OBJECTS");
        fail_at = s ? strtoul(s, NULL, 10) : 0;
        fail_caller = getenv("GP_OOM_CALLER");
        if (o && strlen(o) < sizeof objects) strcpy(objects, o);
        split_objects();
        const char *want = getenv("GP_OOM_RANK"), *rank = getenv("OMPI_COMM_WORLD_RANK");
        armed = !want || (rank && strcmp(want, rank) == 0);
    }
    Dl_info info;
    if (!ours(caller, &info)) return 0;
    unsigned long k = atomic_fetch_add(&counted, 1) + 1;
    int hit = fail_caller ? info.dli_sname && strcmp(info.dli_sname, fail_caller) == 0 &&
                                atomic_exchange(&caller_failed, 1) == 0
                          : fail_at && k == fail_at;
    if (armed && hit) {
        if (getenv("GP_OOM_TRACE")) {   /* backtrace's own allocations are libc's: not counted */
            void *frames[32];
            int depth = backtrace(frames, 32);
            fprintf(stderr, "oom-inject: allocation %lu fails here:\n", k);
            backtrace_symbols_fd(frames, depth, 2);
        }
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    return should_fail(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (should_fail(__builtin_return_address(0))) return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

static char *copy(const char *s, size_t n)
{
    char *d = __libc_malloc(n + 1);
    if (d) { memcpy(d, s, n); d[n] = '\0'; }
    return d;
}

char *strdup(const char *s)
{
    return should_fail(__builtin_return_address(0)) ? NULL : copy(s, strlen(s));
}

char *strndup(const char *s, size_t n)
{
    return should_fail(__builtin_return_address(0)) ? NULL : copy(s, strnlen(s, n));
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("GP_OOM_COUNT_FILE");
    if (!path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%lu\n", (unsigned long)atomic_load(&counted));
    fclose(f);
}
