/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.c — particles from a text file, one particle a line:
 *
 *     # x y z vx vy vz m [id]
 *     1.0 0.0 0.0  0.0 0.5 0.0  0.001
 *
 * Whitespace-separated columns x y z vx vy vz m and an optional integer id
 * (if one line has an id, every line must); '#' starts a comment that runs
 * to the end of the line; blank lines are ignored. Numbers must be finite
 * and masses >= 0 (subnormal numbers such as 1e-310 are finite and
 * accepted; what underflows to zero is refused); ids must be distinct.
 * Errors name the file and line, and show a bad token with its
 * non-printable bytes escaped (\xNN), so binary garbage cannot reach the
 * terminal raw. Units are the file's own
 * (G = 1 in the host). Moved to the centre-of-mass frame unless
 * center = false.
 */
#include "file_checks.h"
#include "model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gp_ic_opt_info opts[] = {
    {"path", GP_IC_OPT_STRING, "", NULL, "the text file to read (required)"},
    {"center", GP_IC_OPT_BOOL, "true", NULL, "move to the centre-of-mass frame"},
};

typedef struct growing {
    size_t n, cap;
    double *rows; /* 7 doubles per particle */
    uint64_t *ids;
    long *lines;  /* the line each particle came from */
} growing;

static int push(growing *g, const double *row, uint64_t id, long line)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 1024;
        double *r = realloc(g->rows, cap * 7 * sizeof(double));
        if (!r) return -1;
        g->rows = r;
        uint64_t *d = realloc(g->ids, cap * sizeof(uint64_t));
        if (!d) return -1;
        g->ids = d;
        long *l = realloc(g->lines, cap * sizeof(long));
        if (!l) return -1;
        g->lines = l;
        g->cap = cap;
    }
    memcpy(&g->rows[7 * g->n], row, 7 * sizeof(double));
    g->lines[g->n] = line;
    g->ids[g->n++] = id;
    return 0;
}

/* tok for a message: printable ASCII as is, anything else as \xNN, cut
 * to about 40 characters. */
static const char *escaped(const char *tok, char *buf, size_t len)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)tok; *p && k + 8 < len; ++p) {
        if (p - (const unsigned char *)tok >= 40) { k += (size_t)snprintf(buf + k, len - k, "..."); break; }
        if (*p >= 0x20 && *p < 0x7f && *p != '\\') buf[k++] = (char)*p;
        else k += (size_t)snprintf(buf + k, len - k, "\\x%02x", *p);
    }
    buf[k < len ? k : len - 1] = '\0';
    return buf;
}

/* Two particles with the same id would be one particle to every tool that
 * reads the snapshots: refuse, naming both lines. */
static int check_unique_ids(const char *path, const growing *g, char *err, size_t errlen)
{
    size_t a, b;
    int found = ic_find_duplicate_id(g->ids, g->n, &a, &b);
    if (found < 0) return ic_fail(err, errlen, "Out of memory checking the ids of '%s'.", path);
    if (found == 0) return 0;
    return ic_fail(err, errlen, "%s lines %ld and %ld: both particles have id %llu; ids must be distinct.",
                   path, g->lines[a], g->lines[b], (unsigned long long)g->ids[a]);
}

/* A first line of UTF-16: a byte-order mark (FF FE or FE FF), or a NUL
 * byte after (or before) every other byte, as ASCII saved as UTF-16 is. */
static int looks_utf16(const unsigned char *b, size_t n)
{
    if (n >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF))) return 1;
    if (n < 4) return 0;
    int odd = 1, even = 1;
    for (size_t k = 0; k + 1 < n; k += 2) { /* the last byte may be the '\n' getline stopped at */
        even &= b[k] == 0;
        odd &= b[k + 1] == 0;
    }
    return odd || even;
}

static int read_file(const char *path, growing *g, int *has_ids, char *err, size_t errlen)
{
    char why[128];
    FILE *fp = gp_file_open_regular(path, "r", why, sizeof why);
    if (!fp) return ic_fail(err, errlen, "Cannot open the particle file '%s': %s.", path, why);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = 0;
    *has_ids = -1;
    static const char *const names[] = {"x", "y", "z", "vx", "vy", "vz", "m", "id"};
    ssize_t got;
    while ((got = getline(&line, &cap, fp)) >= 0) {
        ++lineno;
        if (lineno == 1 && looks_utf16((const unsigned char *)line, (size_t)got)) {
            rc = ic_fail(err, errlen, "%s looks like UTF-16; save it as UTF-8/ASCII (it starts with a "
                         "byte-order mark, or a NUL byte beside every character).", path);
            break;
        }
        const char *nul = memchr(line, '\0', (size_t)got);
        if (nul) {
            rc = ic_fail(err, errlen, "%s line %ld, column %ld (counting bytes): a NUL byte, which a text file "
                         "of numbers never holds; fix or regenerate the file.",
                         path, lineno, (long)(nul - line) + 1);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        double row[7];
        uint64_t id = 0;
        int cols = 0;
        char *save = NULL;
        for (char *tok = strtok_r(line, " \t\r\n,", &save); tok; tok = strtok_r(NULL, " \t\r\n,", &save)) {
            if (cols >= 8) { cols = 9; break; }
            char *end;
            errno = 0;
            char shown[200];
            if (cols < 7) {
                row[cols] = strtod(tok, &end);
                /* ERANGE also flags subnormals (1e-310), which are finite and
                 * kept; only overflow and underflow to zero are refused */
                int underflow = errno == ERANGE && row[cols] == 0 && *end == '\0';
                if (end == tok || *end != '\0' || !isfinite(row[cols]) || (errno == ERANGE && fabs(row[cols]) >= 1)) {
                    rc = ic_fail(err, errlen, "%s line %ld: column %d (%s) is not a finite number: '%s'.",
                                 path, lineno, cols + 1, names[cols], escaped(tok, shown, sizeof shown));
                    goto done;
                }
                if (underflow) {
                    rc = ic_fail(err, errlen, "%s line %ld: column %d (%s) is '%s', too small for a double "
                                 "(below 4.9e-324 it would become 0): write 0 or a larger number.",
                                 path, lineno, cols + 1, names[cols], escaped(tok, shown, sizeof shown));
                    goto done;
                }
            } else {
                if (tok[0] == '-' || (id = strtoull(tok, &end, 10), *end != '\0') || errno == ERANGE) {
                    rc = ic_fail(err, errlen, "%s line %ld: column 8 (id) is not a non-negative integer: '%s'.",
                                 path, lineno, escaped(tok, shown, sizeof shown));
                    goto done;
                }
            }
            ++cols;
        }
        if (cols == 0) continue;
        if (cols != 7 && cols != 8) {
            rc = ic_fail(err, errlen,
                         "%s line %ld: expected 7 or 8 columns (x y z vx vy vz m [id]); found %s%d.",
                         path, lineno, cols > 8 ? "more than " : "", cols > 8 ? 8 : cols);
            goto done;
        }
        if (row[6] < 0) {
            rc = ic_fail(err, errlen, "%s line %ld: the mass is negative (%g); masses must be >= 0.",
                         path, lineno, row[6]);
            goto done;
        }
        int with_id = cols == 8;
        if (*has_ids == -1) *has_ids = with_id;
        else if (*has_ids != with_id) {
            rc = ic_fail(err, errlen,
                         "%s line %ld: has %d columns but earlier lines have %d; either every line "
                         "has an id column or none does.",
                         path, lineno, cols, *has_ids ? 8 : 7);
            goto done;
        }
        if (push(g, row, with_id ? id : g->n, lineno) != 0) {
            rc = ic_fail(err, errlen, "Out of memory reading '%s' at line %ld.", path, lineno);
            goto done;
        }
    }
    if (ferror(fp)) rc = ic_fail(err, errlen, "Error reading '%s': %s.", path, strerror(errno));
done:
    free(line);
    fclose(fp);
    return rc;
}

static int make(size_t n, gsl_rng *rng, const ic_vals *v, gp_ic *out, char *err, size_t errlen)
{
    (void)rng;
    const char *path = ic_str(v, "path");
    if (!path || !path[0])
        return ic_fail(err, errlen, "Model 'file' needs the option 'path' (a text file with columns "
                                    "x y z vx vy vz m [id]).");
    growing g = {0, 0, NULL, NULL, NULL};
    int has_ids = -1;
    if (read_file(path, &g, &has_ids, err, errlen) != 0) goto fail;
    if (has_ids == 1 && check_unique_ids(path, &g, err, errlen) != 0) goto fail;
    if (g.n == 0) {
        ic_fail(err, errlen, "The particle file '%s' holds no particles.", path);
        goto fail;
    }
    if (n != 0 && n != g.n) {
        ic_fail(err, errlen, "The particle file '%s' holds %zu particles but %zu were asked for "
                             "(ask for 0 to take them all).", path, g.n, n);
        goto fail;
    }
    if (ic_alloc(out, g.n, err, errlen) != 0) goto fail;
    for (size_t i = 0; i < g.n; ++i) {
        for (int k = 0; k < 3; ++k) {
            out->pos[3 * i + k] = g.rows[7 * i + k];
            out->vel[3 * i + k] = g.rows[7 * i + 3 + k];
        }
        out->mass[i] = g.rows[7 * i + 6];
        out->id[i] = g.ids[i];
    }
    free(g.rows);
    free(g.ids);
    free(g.lines);
    if (ic_num(v, "center") != 0) ic_to_com_frame(out);
    return 0;
fail:
    free(g.rows);
    free(g.ids);
    free(g.lines);
    return -1;
}

const ic_model ic_model_file = {
    "file",
    "particles from a text file (columns x y z vx vy vz m [id], '#' comments)",
    opts, sizeof opts / sizeof opts[0], make, NULL,
};
