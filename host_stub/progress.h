/* SPDX-License-Identifier: Apache-2.0 */
/*
 * progress.h — one self-overwriting progress line on stderr (time, steps,
 * step rate, ETA), at most twice a second; silent unless enabled (gravhost
 * enables it when stderr is a terminal, or on --progress).
 */
#ifndef GH_PROGRESS_H
#define GH_PROGRESS_H

#include <stdint.h>

typedef struct gh_progress {
    int enabled;
    double t_start, t_end, wall_start, last_print;
    uint64_t steps_start;
} gh_progress;

double gh_wall(void);   /* monotonic seconds */
void gh_progress_start(gh_progress *p, int enabled, double t_start, double t_end, uint64_t steps);
void gh_progress_update(gh_progress *p, double t, uint64_t steps, int force);
void gh_progress_finish(gh_progress *p);

/* Ends an unfinished progress line, so that a line written to stderr next
 * (a plugin's log line) starts on its own; the next update starts a new
 * progress line below it. */
void gh_progress_break(void);

#endif
