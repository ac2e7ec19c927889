/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ic-options.t — the initial-condition API around the models: every model
 * is reproducible by seed (bit-identical) and differs between seeds; bad
 * models, options, values and counts are refused with a sentence naming
 * the problem and leave the output empty; the text-file format is read as
 * documented and its errors name the file line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ic.h"
#include "tap.h"

static int make_kv(const char *model, size_t n, uint64_t seed, gp_ic *ic, char *err, size_t errlen,
                   const char *k1, const char *v1, const char *k2, const char *v2)
{
    gp_param p[2] = {{k1, v1}, {k2, v2}};
    gp_ic_opts o = {p, (size_t)(k2 ? 2 : k1 ? 1 : 0)};
    return gp_ic_make(model, n, seed, &o, ic, err, errlen);
}

static int same(const gp_ic *a, const gp_ic *b)
{
    return a->n == b->n && !memcmp(a->pos, b->pos, 3 * a->n * sizeof(double)) &&
           !memcmp(a->vel, b->vel, 3 * a->n * sizeof(double)) &&
           !memcmp(a->mass, b->mass, a->n * sizeof(double)) && !memcmp(a->id, b->id, a->n * sizeof(uint64_t));
}

/* Expects failure, an empty output, and a sentence containing `needle`. */
static void refuses(const char *what, int rc, const gp_ic *ic, const char *err, const char *needle)
{
    int good = rc != 0 && ic->n == 0 && !ic->pos && strstr(err, needle) != NULL;
    ok(good, "refuses %s", what);
    if (!good) diag("rc %d, n %zu, err '%s', wanted it to mention '%s'", rc, ic->n, err, needle);
    else diag("  -> %s", err);
}

static char tmpdir[] = "/tmp/gp-ic-options-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *fp = fopen(path, "w");
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
    return path;
}

static const char *write_bytes(const char *name, const void *bytes, size_t n)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(bytes, 1, n, fp);
        fclose(fp);
    }
    return path;
}

int main(void)
{
    plan(36);
    char err[512];
    gp_ic a, b, c;
    if (!mkdtemp(tmpdir)) bail("cannot create a temporary directory");

    /* Reproducibility: same seed bit-identical, other seed different. */
    static const char *const sampled[] = {"plummer", "hernquist", "nfw", "galaxy", "uniform"};
    for (size_t k = 0; k < 5; ++k) {
        const char *m = sampled[k];
        const char *opt = strcmp(m, "uniform") == 0 ? "virial_ratio" : NULL;
        int r1 = make_kv(m, 1500, 99, &a, err, sizeof err, opt, "0.3", NULL, NULL);
        int r2 = make_kv(m, 1500, 99, &b, err, sizeof err, opt, "0.3", NULL, NULL);
        int r3 = make_kv(m, 1500, 100, &c, err, sizeof err, opt, "0.3", NULL, NULL);
        ok(r1 == 0 && r2 == 0 && r3 == 0 && same(&a, &b) && !same(&a, &c) &&
               memcmp(a.vel, c.vel, 3 * a.n * sizeof(double)) != 0,
           "%s: same seed gives bit-identical particles, another seed different ones", m);
        gp_ic_free(&a);
        gp_ic_free(&b);
        gp_ic_free(&c);
    }

    /* Discovery. */
    const char *const *models = gp_ic_models();
    int all = 1;
    size_t nm = 0;
    for (; models[nm]; ++nm) {
        size_t count = 99;
        const gp_ic_opt_info *o = gp_ic_describe(models[nm], &count);
        if (!o || count == 0 || !gp_ic_summary(models[nm])) all = 0;
        for (size_t i = 0; o && i < count; ++i)
            if (!o[i].name || !o[i].default_value || !o[i].doc) all = 0;
    }
    ok(all && nm == 8, "gp_ic_models lists %zu models, each with a summary and documented options", nm);
    size_t cnt = 5;
    ok(gp_ic_describe("nope", &cnt) == NULL && cnt == 0 && gp_ic_summary("nope") == NULL,
       "describe/summary of an unknown model give NULL");

    /* Refusals. */
    int rc;
    rc = gp_ic_make("plumber", 10, 1, NULL, &a, err, sizeof err);
    refuses("an unknown model, listing the models", rc, &a, err, "plummer, hernquist");
    rc = gp_ic_make(NULL, 10, 1, NULL, &a, err, sizeof err);
    refuses("a NULL model name", rc, &a, err, "Unknown");
    rc = make_kv("plummer", 10, 1, &a, err, sizeof err, "radius", "1", NULL, NULL);
    refuses("an unknown option, naming the accepted ones", rc, &a, err, "mass, scale, mass_cut");
    rc = make_kv("plummer", 10, 1, &a, err, sizeof err, "scale", "abc", NULL, NULL);
    refuses("an unparsable number", rc, &a, err, "finite number");
    rc = make_kv("plummer", 10, 1, &a, err, sizeof err, "scale", "nan", NULL, NULL);
    refuses("NaN", rc, &a, err, "finite number");
    rc = make_kv("plummer", 10, 1, &a, err, sizeof err, "mass", "-1", NULL, NULL);
    refuses("a negative mass", rc, &a, err, "(0,inf)");
    rc = make_kv("kepler", 2, 1, &a, err, sizeof err, "e", "1", NULL, NULL);
    refuses("eccentricity 1", rc, &a, err, "[0,1)");
    rc = make_kv("kepler", 2, 1, &a, err, sizeof err, "start", "middle", NULL, NULL);
    refuses("an enum value not in the list", rc, &a, err, "pericenter|apocenter");
    rc = make_kv("hernquist", 10, 1, &a, err, sizeof err, "frame", "com", "rtrunc", "-3");
    refuses("a negative truncation radius", rc, &a, err, "rtrunc");
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "center", "maybe", NULL, NULL);
    refuses("a bad boolean", rc, &a, err, "true or false");
    rc = gp_ic_make("plummer", 0, 1, NULL, &a, err, sizeof err);
    refuses("n = 0 for a sampled model", rc, &a, err, "at least one particle");
    rc = gp_ic_make("kepler", 3, 1, NULL, &a, err, sizeof err);
    refuses("n = 3 for kepler", rc, &a, err, "exactly 2");
    rc = gp_ic_make("galaxy", 5, 1, NULL, &a, err, sizeof err);
    refuses("too few particles for the galaxy's components", rc, &a, err, "more particles");
    rc = make_kv("galaxy", 1000, 1, &a, err, sizeof err, "halo_concentration", "0.5", NULL, NULL);
    refuses("a concentration below 1", rc, &a, err, "[1,1000]");
    gp_param bad[1] = {{"mass", NULL}};
    gp_ic_opts bo = {bad, 1};
    rc = gp_ic_make("plummer", 10, 1, &bo, &a, err, sizeof err);
    refuses("an option without a value", rc, &a, err, "no name or no value");
    ok(gp_ic_make("plummer", 10, 1, NULL, NULL, err, sizeof err) != 0, "refuses a NULL output");

    /* Later options override earlier ones. */
    rc = make_kv("uniform", 100, 1, &a, err, sizeof err, "radius", "5", "radius", "2");
    double rmax = 0;
    for (size_t i = 0; rc == 0 && i < a.n; ++i) {
        const double *x = &a.pos[3 * i];
        double r = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
        if (r > rmax) rmax = r;
    }
    ok(rc == 0 && rmax > 2.5 && rmax < 6, /* r^2 near 4, not 25; the COM shift moves it a little */ "a later option overrides an earlier one of the same name");
    gp_ic_free(&a);

    /* The text format. */
    const char *p = write_file("good.txt", "# x y z vx vy vz m\n"
                                           "\n"
                                           "1 0 0  0 0.5 0  0.25   # a comment\n"
                                           "-1 0 0 0 -0.5 0 0.25\n"
                                           "  0 2 0 0 0 0.1 0.5\n");
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", p, "center", "false");
    ok(rc == 0 && a.n == 3 && a.pos[6 + 1] == 2 && a.vel[3 + 1] == -0.5 && a.mass[2] == 0.5 && a.id[2] == 2,
       "file: reads columns, skips comments and blank lines, ids 0..n-1");
    gp_ic_free(&a);
    rc = make_kv("file", 3, 1, &a, err, sizeof err, "path", p, NULL, NULL);
    ok(rc == 0 && a.n == 3 && a.pos[6 + 1] == 2 - 1.0 && a.pos[0] == 1 && a.vel[8] == 0.1 - 0.1 * 0.5,
       "file: center = true (default) moves to the centre-of-mass frame");
    gp_ic_free(&a);
    p = write_file("ids.txt", "1 0 0 0 0 0 1 17\n2 0 0 0 0 0 1 42\n");
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", p, NULL, NULL);
    ok(rc == 0 && a.n == 2 && a.id[0] == 17 && a.id[1] == 42, "file: an eighth column gives the ids");
    gp_ic_free(&a);
    p = write_file("short.txt", "# header\n1 0 0 0 0 0 1\n1 2 3 4 5\n");
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", p, NULL, NULL);
    refuses("a line with 5 columns, naming line 3", rc, &a, err, "line 3: expected 7 or 8 columns");
    p = write_file("word.txt", "1 0 0 0 0 0 1\n1 0 zero 0 0 0 1\n");
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", p, NULL, NULL);
    refuses("a word where a number belongs, naming line and column", rc, &a, err, "line 2: column 3 (z)");
    p = write_file("neg.txt", "1 0 0 0 0 0 -1\n");
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", p, NULL, NULL);
    refuses("a negative mass in a file", rc, &a, err, "line 1: the mass is negative");
    /* Bytes no text of numbers holds: a NUL (what precedes it was kept),
     * and UTF-16, with or without a byte-order mark ("holds no particles"). */
    static const char nul[] = "1 0 0 0 0 0 1\n2 0 0\0 0 0 0 1\n";
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", write_bytes("nul.txt", nul, sizeof nul - 1), NULL, NULL);
    refuses("a NUL byte, naming line and column", rc, &a, err, "line 2, column 6");
    static const char bom16[] = "\xff\xfe" "1\0 \0" "0\0 \0" "0\0 \0" "0\0 \0" "0\0 \0" "0\0 \0" "1\0\n\0";
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", write_bytes("bom16.txt", bom16, sizeof bom16 - 1),
                 NULL, NULL);
    refuses("UTF-16 with a byte-order mark", rc, &a, err, "looks like UTF-16; save it as UTF-8/ASCII");
    static const char be16[] = "\0" "1\0 \0" "0\0 \0" "0\0 \0" "0\0 \0" "0\0 \0" "0\0 \0" "1\0\n";
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", write_bytes("be16.txt", be16, sizeof be16 - 1),
                 NULL, NULL);
    refuses("UTF-16 (big-endian) without a byte-order mark", rc, &a, err, "looks like UTF-16");
    rc = make_kv("file", 5, 1, &a, err, sizeof err, "path", write_file("two.txt", "1 0 0 0 0 0 1\n2 0 0 0 0 0 1\n"),
                 NULL, NULL);
    refuses("a count that does not match the file", rc, &a, err, "holds 2 particles but 5");
    rc = make_kv("file", 0, 1, &a, err, sizeof err, "path", "/nonexistent/dir/x.txt", NULL, NULL);
    refuses("a missing file", rc, &a, err, "Cannot open");
    rc = gp_ic_make("file", 0, 1, NULL, &a, err, sizeof err);
    refuses("the file model without a path", rc, &a, err, "needs the option 'path'");

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) diag("could not remove %s", tmpdir);
    return done_testing();
}
