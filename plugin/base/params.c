/* SPDX-License-Identifier: Apache-2.0 */
/*
 * params.c — the generic parameter table behind set_param / get_param.
 *
 * A plugin declares a static gp_param_info[]; this file parses values by
 * type (double, int, bool, enum), checks ranges written in `allowed`
 * ("[0,inf)", "(0,1]"), checks enum words ("a|b|c", where the word "N"
 * means any positive integer), and formats values back so that get_param's
 * answer is accepted by set_param unchanged (doubles in the shortest form
 * that round-trips exactly).
 */
#include "base/base_instance.h"
#include "base/base_params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s)) ++s;
    return s;
}

/* Parses "inf", "-inf", "+inf" or a number; advances *s. */
static int parse_bound(const char **s, double *out)
{
    const char *p = skip_space(*s);
    int sign = 1;
    const char *q = p;
    if (*q == '-' || *q == '+') { sign = *q == '-' ? -1 : 1; ++q; }
    if (strncasecmp(q, "inf", 3) == 0) {
        *out = sign * HUGE_VAL;
        *s = q + 3;
        return 1;
    }
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno) return 0;
    *out = v;
    *s = end;
    return 1;
}

int gp_range_parse(const char *allowed, double *lo, int *lo_open, double *hi, int *hi_open)
{
    if (!allowed) return 0;
    const char *s = skip_space(allowed);
    if (*s != '[' && *s != '(') return 0;
    *lo_open = *s == '(';
    ++s;
    if (!parse_bound(&s, lo)) return 0;
    s = skip_space(s);
    if (*s != ',') return 0;
    ++s;
    if (!parse_bound(&s, hi)) return 0;
    s = skip_space(s);
    if (*s != ']' && *s != ')') return 0;
    *hi_open = *s == ')';
    s = skip_space(s + 1);
    return *s == '\0';
}

static int in_range(double v, double lo, int lo_open, double hi, int hi_open)
{
    if (lo_open ? !(v > lo) : !(v >= lo)) return 0;
    if (hi_open ? !(v < hi) : !(v <= hi)) return 0;
    return 1;
}

/* True when the trailing part of a number is only whitespace. */
static int only_space(const char *s)
{
    return *skip_space(s) == '\0';
}

/* Parses a positive integer (for the enum word "N"). */
static int parse_positive_int(const char *value, long long *out)
{
    const char *p = skip_space(value);
    if (!isdigit((unsigned char)*p)) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (errno || !only_space(end) || v <= 0) return 0;
    *out = v;
    return 1;
}

/* Length of the enum word starting at w (up to '|' or end). */
static size_t word_len(const char *w)
{
    size_t k = 0;
    while (w[k] && w[k] != '|') ++k;
    return k;
}

static int is_int_word(const char *w, size_t len) { return len == 1 && w[0] == 'N'; }

/* "a, b, or a positive integer" into msg (for error sentences). */
static void describe_enum(const char *allowed, char *msg, size_t len)
{
    size_t used = 0;
    msg[0] = '\0';
    int first = 1;
    for (const char *w = allowed; ; ) {
        size_t wl = word_len(w);
        int k = is_int_word(w, wl)
                    ? snprintf(msg + used, len - used, "%sa positive integer", first ? "" : ", ")
                    : snprintf(msg + used, len - used, "%s'%.*s'", first ? "" : ", ", (int)wl, w);
        if (k < 0 || (size_t)k >= len - used) return;
        used += (size_t)k;
        first = 0;
        if (!w[wl]) break;
        w += wl + 1;
    }
}

/* The sentence for a value that is not `what` (a finite number, an
 * integer) within range. */
static gp_status not_a_number(const gp_param_info *info, const char *value, const char *what,
                              const char *range, char *msg, size_t msglen)
{
    snprintf(msg, msglen, "'%s' is not a valid value for parameter '%s'; give %s in %s", value,
             info->name, what, range);
    return GP_ERR_INVALID_ARGUMENT;
}

gp_status gp_param_parse(const gp_param_info *info, const char *value,
                         gp_param_value *out, char *msg, size_t msglen)
{
    gp_param_value v;
    memset(&v, 0, sizeof v);
    if (!value) {
        snprintf(msg, msglen, "the value of '%s' is NULL; pass a string", info->name);
        return GP_ERR_INVALID_ARGUMENT;
    }
    double lo = -HUGE_VAL, hi = HUGE_VAL;
    int lo_open = 1, hi_open = 1;
    int has_range = info->type != GP_PARAM_ENUM && info->type != GP_PARAM_BOOL
                    && gp_range_parse(info->allowed, &lo, &lo_open, &hi, &hi_open);
    const char *range = has_range ? info->allowed : "(-inf,inf)";

    switch (info->type) {
    case GP_PARAM_DOUBLE: {
        const char *p = skip_space(value);
        char *end;
        errno = 0;
        double d = strtod(p, &end);
        if (end == p || !only_space(end) || !isfinite(d) || !in_range(d, lo, lo_open, hi, hi_open))
            return not_a_number(info, value, "a finite number", range, msg, msglen);
        /* below the smallest double strtod answers 0: a value the user did
         * not give, and where 0 is allowed it would pass silently */
        if (d == 0 && errno == ERANGE)
            return not_a_number(info, value, "a number a double can hold (this one underflows to 0)", range, msg,
                                msglen);
        v.d = d;
        break;
    }
    case GP_PARAM_INT: {
        const char *p = skip_space(value);
        char *end;
        errno = 0;
        long long i = strtoll(p, &end, 10);
        if (end == p || !only_space(end) || errno || !in_range((double)i, lo, lo_open, hi, hi_open))
            return not_a_number(info, value, "an integer", range, msg, msglen);
        v.i = i;
        break;
    }
    case GP_PARAM_BOOL: {
        static const char *const yes[] = {"true", "1", "yes", "on"};
        static const char *const no[] = {"false", "0", "no", "off"};
        int found = 0;
        for (int k = 0; k < 4 && !found; ++k) {
            if (strcasecmp(value, yes[k]) == 0) { v.b = 1; found = 1; }
            else if (strcasecmp(value, no[k]) == 0) { v.b = 0; found = 1; }
        }
        if (!found) {
            snprintf(msg, msglen, "'%s' is not a valid value for parameter '%s'; "
                     "give true or false (also 1/0, yes/no, on/off)", value, info->name);
            return GP_ERR_INVALID_ARGUMENT;
        }
        break;
    }
    case GP_PARAM_ENUM: {
        if (!info->allowed) {
            snprintf(msg, msglen, "enum parameter '%s' has no allowed words "
                     "(a bug in the plugin)", info->name);
            return GP_ERR_INTERNAL;
        }
        int idx = 0, found = 0;
        for (const char *w = info->allowed; ; ++idx) {
            size_t wl = word_len(w);
            if (is_int_word(w, wl)) {
                long long n;
                if (parse_positive_int(value, &n)) { v.word = idx; v.i = n; found = 1; break; }
            } else if (strlen(value) == wl && strncasecmp(value, w, wl) == 0) {
                v.word = idx; found = 1; break;
            }
            if (!w[wl]) break;
            w += wl + 1;
        }
        if (!found) {
            char words[512];
            describe_enum(info->allowed, words, sizeof words);
            snprintf(msg, msglen, "'%s' is not a valid value for parameter '%s'; "
                     "give one of %s", value, info->name, words);
            return GP_ERR_INVALID_ARGUMENT;
        }
        break;
    }
    default:
        snprintf(msg, msglen, "parameter '%s' has an unknown type %d (a bug in the plugin)",
                 info->name, (int)info->type);
        return GP_ERR_INTERNAL;
    }
    *out = v;
    return GP_OK;
}

int gp_param_format(const gp_param_info *info, const gp_param_value *v, char *buf, size_t buflen)
{
    switch (info->type) {
    case GP_PARAM_DOUBLE: {
        /* the shortest of 15-17 digits that reads back exactly: 0.1, not
         * 0.10000000000000001 */
        char tmp[40];
        for (int digits = 15; digits <= 17; ++digits) {
            snprintf(tmp, sizeof tmp, "%.*g", digits, v->d);
            if (!isfinite(v->d) || strtod(tmp, NULL) == v->d) break;
        }
        return snprintf(buf, buflen, "%s", tmp);
    }
    case GP_PARAM_INT:    return snprintf(buf, buflen, "%lld", v->i);
    case GP_PARAM_BOOL:   return snprintf(buf, buflen, "%s", v->b ? "true" : "false");
    case GP_PARAM_ENUM: {
        const char *w = info->allowed ? info->allowed : "";
        for (int idx = 0; idx < v->word && *w; ++idx) {
            size_t wl = word_len(w);
            w += wl + (w[wl] ? 1 : 0);
        }
        size_t wl = word_len(w);
        if (is_int_word(w, wl)) return snprintf(buf, buflen, "%lld", v->i);
        return snprintf(buf, buflen, "%.*s", (int)wl, w);
    }
    }
    return snprintf(buf, buflen, "?");
}

int gp_param_index(const gp_base *base, const char *name)
{
    if (!name) return -1;
    for (size_t k = 0; k < base->n_params; ++k)
        if (strcmp(base->param_info[k].name, name) == 0) return (int)k;
    return -1;
}

int gp_param_threads(const gp_base *base)
{
    int k = gp_param_index(base, GP_PARAM_THREADS);
    long long t = k >= 0 ? base->param[k].i : 0;
    return t > 0 ? (int)t : omp_get_max_threads();
}

int gp_threads_for(int threads, size_t items, size_t pairs)
{
    return items > 1 && pairs >= GP_PAR_PAIRS_MIN && threads > 1 ? threads : 1;
}

/* "G, eps, theta" into buf. */
static void list_names(const gp_base *base, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (base->n_params == 0) { snprintf(buf, len, "(none: this plugin has no parameters)"); return; }
    for (size_t k = 0; k < base->n_params; ++k) {
        int w = snprintf(buf + used, len - used, "%s%s", k ? ", " : "", base->param_info[k].name);
        if (w < 0 || (size_t)w >= len - used) return;
        used += (size_t)w;
    }
}

static gp_status unknown_name(gp_base *base, const char *name)
{
    char names[512];
    list_names(base, names, sizeof names);
    return gp_fail(base, GP_ERR_UNKNOWN_PARAMETER,
                   "there is no parameter named '%s'; the accepted names are: %s",
                   name, names);
}

gp_status gp_base_set_param(gp_base *base, const char *name, const char *value)
{
    if (!name)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_param was given a NULL name; pass a parameter name");
    int k = gp_param_index(base, name);
    if (k < 0) return unknown_name(base, name);
    char msg[GP_ERROR_LEN - 64];
    gp_param_value v;
    gp_status st = gp_param_parse(&base->param_info[k], value, &v, msg, sizeof msg);
    if (st != GP_OK) return gp_fail(base, st, "%s", msg);
    base->param[k] = v;
    return GP_OK;
}

gp_status gp_base_get_param(gp_base *base, const char *name, char *buf, size_t buflen)
{
    if (!name)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "get_param was given a NULL name; pass a parameter name");
    int k = gp_param_index(base, name);
    if (k < 0) return unknown_name(base, name);
    if (!buf || buflen == 0)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "get_param was given no buffer for '%s'; pass a buffer "
                       "of at least 32 bytes", name);
    char tmp[256];
    int w = gp_param_format(&base->param_info[k], &base->param[k], tmp, sizeof tmp);
    if (w < 0 || (size_t)w >= buflen) {
        if (buflen) buf[0] = '\0';
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "the buffer for '%s' holds %zu bytes but the value needs %d; "
                       "pass a buffer of at least 32 bytes", name, buflen, w + 1);
    }
    memcpy(buf, tmp, (size_t)w + 1);
    return GP_OK;
}
