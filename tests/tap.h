/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tap.h — a tiny TAP producer in the spirit of c-tap-harness (header only).
 *
 *   plan(n) / plan_lazy() + done_testing(), ok(cond, fmt, ...),
 *   is_int(got, want, ...), is_double(got, want, rel, ...) (relative
 *   tolerance, falls back to absolute when want == 0), is_string(...),
 *   skip(n, why), skip_all(why), bail(why), diag(fmt, ...).
 *
 * On failure it prints what it got and what it wanted as TAP comments.
 * Test data is found through the GP_TEST_DATA / GP_BUILD environment
 * variables, never through the working directory.
 */
#ifndef GP_TAP_H
#define GP_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#  define TAP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#  define TAP_UNUSED __attribute__((unused))
#else
#  define TAP_PRINTF(a, b)
#  define TAP_UNUSED
#endif

/* A test program made of several files counts as one: each file defines
 * TAP_SHARED_STATE before including this header, and exactly one of them
 * TAP_DEFINE_STATE as well. */
#if defined(TAP_SHARED_STATE) && !defined(TAP_DEFINE_STATE)
extern int tap_planned, tap_run, tap_failed;
#elif defined(TAP_SHARED_STATE)
int tap_planned = -1, tap_run = 0, tap_failed = 0;
#else
static int tap_planned = -1; /* -1: lazy */
static int tap_run = 0;
static int tap_failed = 0;
#endif

static TAP_UNUSED void tap_vreport(int pass, const char *fmt, va_list ap)
{
    ++tap_run;
    if (!pass) ++tap_failed;
    printf("%sok %d - ", pass ? "" : "not ", tap_run);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
}

static TAP_UNUSED TAP_PRINTF(1, 2) void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static TAP_UNUSED void plan(int n)
{
    tap_planned = n;
    printf("1..%d\n", n);
    fflush(stdout);
}

static TAP_UNUSED void plan_lazy(void) { tap_planned = -1; }

/* Prints the plan for a lazy plan and returns the exit status. */
static TAP_UNUSED int done_testing(void)
{
    if (tap_planned < 0) printf("1..%d\n", tap_run);
    else if (tap_run != tap_planned)
        diag("planned %d tests but ran %d", tap_planned, tap_run);
    fflush(stdout);
    return tap_failed ? 1 : (tap_planned >= 0 && tap_run != tap_planned) ? 255 : 0;
}

static TAP_UNUSED TAP_PRINTF(2, 3) int ok(int pass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_vreport(pass, fmt, ap);
    va_end(ap);
    return pass;
}

static TAP_UNUSED TAP_PRINTF(3, 4) int is_int(long long got, long long want, const char *fmt, ...)
{
    va_list ap;
    int pass = got == want;
    va_start(ap, fmt);
    tap_vreport(pass, fmt, ap);
    va_end(ap);
    if (!pass) diag("     got: %lld\n#   wanted: %lld", got, want);
    return pass;
}

/* |got - want| <= rel * |want| (or <= rel when want == 0). NaN fails. */
static TAP_UNUSED TAP_PRINTF(4, 5) int is_double(double got, double want, double rel, const char *fmt, ...)
{
    va_list ap;
    double tol = want != 0.0 ? rel * fabs(want) : rel;
    int pass = !isnan(got) && !isnan(want) && fabs(got - want) <= tol;
    va_start(ap, fmt);
    tap_vreport(pass, fmt, ap);
    va_end(ap);
    if (!pass) diag("     got: %.17g\n#   wanted: %.17g (relative tolerance %g)", got, want, rel);
    return pass;
}

static TAP_UNUSED TAP_PRINTF(3, 4) int is_string(const char *got, const char *want, const char *fmt, ...)
{
    va_list ap;
    int pass = got && want && strcmp(got, want) == 0;
    va_start(ap, fmt);
    tap_vreport(pass, fmt, ap);
    va_end(ap);
    if (!pass) diag("     got: '%s'\n#   wanted: '%s'", got ? got : "(null)", want ? want : "(null)");
    return pass;
}

/* Records n skipped tests with a reason. */
static TAP_UNUSED void skip(int n, const char *why)
{
    for (int i = 0; i < n; ++i) {
        ++tap_run;
        printf("ok %d # SKIP %s\n", tap_run, why);
    }
    fflush(stdout);
}

/* Skips the whole test program (e.g. no CUDA device) and exits 0. */
static TAP_UNUSED void skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    fflush(stdout);
    exit(0);
}

/* Aborts the whole run: something the rest depends on is broken. */
static TAP_UNUSED void bail(const char *why)
{
    printf("Bail out! %s\n", why);
    fflush(stdout);
    exit(255);
}

#endif /* GP_TAP_H */
