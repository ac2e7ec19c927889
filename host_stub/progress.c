/* SPDX-License-Identifier: Apache-2.0 */
/* progress.c — see the header. */
#include "progress.h"

#include <stdio.h>
#include <time.h>

/* a progress line is on stderr without its newline (stderr is one) */
static int line_open;

void gh_progress_break(void)
{
    if (line_open) fputc('\n', stderr);
    line_open = 0;
}

double gh_wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void gh_progress_start(gh_progress *p, int enabled, double t_start, double t_end, uint64_t steps)
{
    p->enabled = enabled;
    p->t_start = t_start;
    p->t_end = t_end;
    p->wall_start = gh_wall();
    p->last_print = 0;
    p->steps_start = steps;
}

static void hms(double s, char *buf, size_t len)
{
    if (!(s >= 0) || s > 1e7) { snprintf(buf, len, "--:--:--"); return; }
    long t = (long)(s + 0.5);
    snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void gh_progress_update(gh_progress *p, double t, uint64_t steps, int force)
{
    if (!p->enabled) return;
    double now = gh_wall();
    if (!force && now - p->last_print < 0.5) return;
    p->last_print = now;
    double el = now - p->wall_start, span = p->t_end - p->t_start;
    double frac = span > 0 ? (t - p->t_start) / span : 1;
    double rate = el > 0 ? (double)(steps - p->steps_start) / el : 0;
    char eta[32], elapsed[32];
    hms(frac > 0 ? el * (1 - frac) / frac : -1, eta, sizeof eta);
    hms(el, elapsed, sizeof elapsed);
    fprintf(stderr, "\r  t = %-10.5g of %g (%5.1f%%)  steps %-9llu %8.1f steps/s  elapsed %s  ETA %s ",
            t, p->t_end, 100 * frac, (unsigned long long)steps, rate, elapsed, eta);
    fflush(stderr);
    line_open = 1;
}

void gh_progress_finish(gh_progress *p)
{
    if (p->enabled) fputc('\n', stderr);
    line_open = 0;
}
