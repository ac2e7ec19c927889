/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config-include-swap — the file an @include names is read once, through
 * the descriptor gravhost checked (host_stub/config.c read_includes): a
 * name swapped, right after that open, for a file of other settings or for
 * a FIFO changes nothing; the config parses with the text that was
 * checked. This program's open() is config.c's (linked in): once armed,
 * it swaps the armed name just after the real open, as an attacker racing
 * the check would.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"

static char armed[4300];      /* swap this name at its next open, */
static char swap_with[4300];  /* for this file ("": a FIFO) */

int open(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "open");
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    int fd = real(path, flags, mode);
    if (armed[0] && strcmp(path, armed) == 0) {
        if (swap_with[0]) {
            if (rename(swap_with, armed) != 0) diag("cannot swap %s", armed);
        } else if (unlink(armed) != 0 || mkfifo(armed, 0600) != 0) {
            diag("cannot make %s a FIFO", armed);
        }
        armed[0] = '\0';
    }
    return fd;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "not ok - the parse blocked (a FIFO opened)\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) bail("cannot write a file of the test");
}

/* Parses top.cfg with inc.cfg swapped (for other.cfg, or a FIFO) after
 * its checked open; n: the particle count the config ended up with. */
static int parse_swapped(const char *dir, const char *inc, int fifo, unsigned long long *n, char *err, size_t len)
{
    char top[4200], other[4200];
    snprintf(top, sizeof top, "%s/top.cfg", dir);
    snprintf(armed, sizeof armed, "%s/%s", dir, inc);
    snprintf(other, sizeof other, "%s/other.cfg", dir);
    put(other, "initial_conditions = { model = \"plummer\"; n = 999; seed = 1; };\n");
    snprintf(swap_with, sizeof swap_with, "%s", fifo ? "" : other);
    gh_config cfg;
    alarm(20);
    int rc = gh_config_load(top, &cfg, err, len);
    alarm(0);
    armed[0] = '\0';
    *n = rc == 0 ? cfg.n : 0;
    if (rc == 0) gh_config_free(&cfg);
    return rc;
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    char dir[] = "/tmp/config-include-swap.XXXXXX";
    if (!mkdtemp(dir)) bail("no temporary directory");
    char p[4200], err[2048];
    plan(4);
    for (int nested = 0; nested < 2; ++nested)
        for (int fifo = 0; fifo < 2; ++fifo) {
            /* top.cfg includes ic.cfg directly, or through mid.cfg */
            snprintf(p, sizeof p, "%s/top.cfg", dir);
            put(p, nested ? "solver = { plugin = \"cpu-direct\"; };\nrun = { t_end = 0.125; };\n@include \"mid.cfg\"\n"
                          : "solver = { plugin = \"cpu-direct\"; };\nrun = { t_end = 0.125; };\n@include \"ic.cfg\"\n");
            snprintf(p, sizeof p, "%s/mid.cfg", dir);
            put(p, "@include \"ic.cfg\"\n");
            snprintf(p, sizeof p, "%s/ic.cfg", dir);
            remove(p);
            put(p, "initial_conditions = { model = \"plummer\"; n = 32; seed = 1; };\n");
            unsigned long long n = 0;
            int rc = parse_swapped(dir, "ic.cfg", fifo, &n, err, sizeof err);
            ok(rc == 0 && n == 32, "%s include swapped for %s after its check: the checked text is parsed "
               "(rc %d, n = %llu%s%s)", nested ? "a nested" : "an", fifo ? "a FIFO" : "a file of other settings",
               rc, n, rc ? ": " : "", rc ? err : "");
        }
    snprintf(p, sizeof p, "rm -rf '%s'", dir);
    if (system(p) != 0) diag("cannot remove %s", dir);
    return done_testing();
}
