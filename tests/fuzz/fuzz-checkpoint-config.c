/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-checkpoint-config — random damage to a valid checkpoint and a valid
 * gravhost config: no crash, hang or silent acceptance. Built with
 * -fsanitize=address,undefined (tests/fuzz/module.mk), so a memory error
 * or undefined behaviour anywhere in the checkpoint loader or the config
 * parser aborts the test; each case runs under alarm() (a hang fails it).
 *
 *   fuzz-checkpoint-config [CASES [SEED]]    default 10000 of each, seed 1
 *
 * Mutations: bit flips, truncation, splices (a chunk copied over another
 * place or inserted), garbage appended, fields set to extremes (0, -1,
 * NaN, Inf, 1e308, subnormals, INT64_MIN, ...), and two or three of these
 * at once. A checkpoint field edit is "resealed" half of the time (its
 * checksums recomputed, as a deliberate edit would), so the range checks
 * behind the checksum are reached too.
 *
 * The oracle, per case:
 *   checkpoint, bytes unchanged        -> loads;
 *   checkpoint, changed, not resealed  -> refused, with a sentence;
 *   checkpoint, resealed edit          -> refused with a sentence, or it
 *                                         loads and then 20 steps run with
 *                                         finite, non-decreasing time (or
 *                                         stop with a sentence);
 *   config                             -> parsed, or refused with a
 *                                         sentence (FILE:LINE: ...).
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "checkpoint_bytes.h"
#include "gp_sim.h"
#include "testlib.h"

#define CASE_SECONDS 10

static tl_rng rng;   /* testlib's splitmix64: a seed gives the same cases everywhere */
static uint64_t rnd(void) { return tl_next(&rng); }
static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static volatile const char *current = "setup";
static volatile long current_case = -1;
static void on_alarm(int sig)
{
    (void)sig;
    char msg[160];
    int len = snprintf(msg, sizeof msg, "not ok - %s case %ld did not finish in %d s (a hang)\n",
                       (const char *)current, (long)current_case, CASE_SECONDS);
    if (len > 0) (void)!write(1, msg, (size_t)len);
    _exit(1);
}

/* ---- the generic mutations ------------------------------------------------- */

typedef struct buf { unsigned char *b; size_t len, cap; } buf;

static void buf_set(buf *m, const unsigned char *src, size_t len)
{
    if (m->cap < len + 4096) { m->cap = len + 4096; m->b = realloc(m->b, m->cap); }
    memcpy(m->b, src, len);
    m->len = len;
}

static void flip_bits(buf *m)
{
    int k = 1 + (int)rnd_below(8);
    for (int i = 0; i < k && m->len; ++i) m->b[rnd_below(m->len)] ^= (unsigned char)(1u << rnd_below(8));
}
static void truncate_at(buf *m) { m->len = rnd_below(m->len); }
static void splice(buf *m)
{
    if (m->len < 2) return;
    size_t k = 1 + rnd_below(64), a = rnd_below(m->len), b = rnd_below(m->len);
    if (a + k > m->len) k = m->len - a;
    if (rnd() & 1) {                                   /* overwrite at b */
        if (b + k > m->len) k = m->len - b;
        memmove(m->b + b, m->b + a, k);
    } else {                                           /* insert at b */
        unsigned char tmp[64];
        memcpy(tmp, m->b + a, k);
        memmove(m->b + b + k, m->b + b, m->len - b);
        memcpy(m->b + b, tmp, k);
        m->len += k;
    }
}
static void append_garbage(buf *m)
{
    size_t k = 1 + rnd_below(64);
    for (size_t i = 0; i < k; ++i) m->b[m->len++] = (unsigned char)rnd();
}

/* ---- checkpoints -------------------------------------------------------------- */

/* Header layout: tests/fuzz/checkpoint_bytes.h. */
static size_t header_len(void) { return H_END; }

static void reseal(buf *m) { fz_reseal(m->b, m->len); }

static long last_edit = -1;   /* byte offset of the last field edit, for the report */

static void set_extreme(buf *m, size_t n)
{
    static const double dv[] = { 0.0, -0.0, -1.0, 1e308, -1e308, 4.9e-324, 2.2e-308, 1e-300, 1e300 };
    static const uint64_t uv[] = { 0, 1, UINT64_MAX, UINT64_C(1) << 63, INT64_MAX, UINT32_MAX,
                                   UINT64_C(4294967396), 41, 64, 255 };
    /* a field: one of the header's 8-byte words, or an element of a payload
     * array (pos .. t_last), or a level byte */
    size_t off;
    int pick = (int)rnd_below(3);
    if (pick == 0 || m->len < H_END + 8 * n) off = 8 + 8 * rnd_below((H_END - 8) / 8);
    else if (pick == 1) off = H_END + 8 * rnd_below(10 * n);            /* pos, vel, acc, mass */
    else {
        size_t levels = H_END + 8 * 10 * n + 8 * n;                    /* after ids */
        if (rnd() & 1) { if (levels < m->len) m->b[levels + rnd_below(n)] = (unsigned char)rnd(); return; }
        off = levels + n + 8 * rnd_below(n);                            /* t_last */
    }
    if (off + 8 > m->len) return;
    last_edit = (long)off;
    uint64_t bits;
    switch (rnd_below(4)) {
    case 0: { double d = dv[rnd_below(sizeof dv / sizeof dv[0])]; memcpy(&bits, &d, 8); break; }
    case 1: { double d = rnd() & 1 ? NAN : (rnd() & 1 ? INFINITY : -INFINITY); memcpy(&bits, &d, 8); break; }
    case 2: bits = uv[rnd_below(sizeof uv / sizeof uv[0])]; break;
    default: bits = rnd(); break;
    }
    memcpy(m->b + off, &bits, 8);
}

static void config_extreme(buf *m);

/* One to three rounds of random edits (a quarter of the cases get two or
 * three): bit flips, truncation, splices, appended garbage, or an extreme
 * value (in the config text, or in a checkpoint of n particles). Returns
 * the number of rounds. */
static int mutate(buf *m, int config, size_t n)
{
    int rounds = rnd_below(4) == 0 ? 2 + (int)rnd_below(2) : 1;
    for (int r = 0; r < rounds; ++r) {
        switch (rnd_below(5)) {
        case 0: flip_bits(m); break;
        case 1: truncate_at(m); break;
        case 2: splice(m); break;
        case 3: append_garbage(m); break;
        default:
            if (config) config_extreme(m);
            else set_extreme(m, n);
            break;
        }
    }
    return rounds;
}

typedef struct tally { long loaded_same, refused, resealed_ran, resealed_refused, failures; } tally;

static int clear_sentence(const char *msg)
{
    return msg && strlen(msg) > 20 && strstr(msg, "checkpoint") != NULL;
}

static void fail_case(tally *t, long i, const char *what, const char *detail)
{
    t->failures++;
    if (t->failures <= 10) printf("# FAIL case %ld (%s, last field edit at byte %ld): %s\n", i, what, last_edit, detail);
}

/* Loaded after a deliberate edit: 20 steps must run or stop with a sentence. */
static int runs_sanely(gp_sim *sim, char *why, size_t len)
{
    double t = gp_sim_time(sim);
    if (!isfinite(t)) { snprintf(why, len, "accepted time %g", t); return 0; }
    for (int k = 0; k < 20; ++k) {
        double before = gp_sim_time(sim);
        gp_status st = gp_sim_step(sim, before + 1.0);
        if (st != GP_OK) {
            if (strlen(gp_sim_last_error(sim)) < 10) { snprintf(why, len, "step failed without a sentence"); return 0; }
            return 1;
        }
        double now = gp_sim_time(sim);
        if (!isfinite(now) || now < before) {
            snprintf(why, len, "step %d went from t = %g to t = %g", k, before, now);
            return 0;
        }
    }
    return 1;
}

static void fuzz_checkpoints(const char *dir, long cases, tally *t)
{
    char base_path[4096], path[4096];
    snprintf(base_path, sizeof base_path, "%s/base.gpck", dir);
    snprintf(path, sizeof path, "%s/case.gpck", dir);

    /* a valid checkpoint: 32 particles, block-rk2 started and stepped */
    enum { N = 32 };
    double pos[3 * N], vel[3 * N], mass[N];
    for (int i = 0; i < N; ++i) {
        for (int k = 0; k < 3; ++k) {
            pos[3 * i + k] = (double)((rnd() >> 11) * 0x1p-53) - 0.5;
            vel[3 * i + k] = 0.3 * ((double)((rnd() >> 11) * 0x1p-53) - 0.5);
        }
        mass[i] = 1.0 / N;
    }
    gp_sim *sim = NULL;
    const char *pn[] = { "eps", "threads" }, *pv[] = { "0.05", "1" };
    int ok = gp_sim_new(&sim) == GP_OK && gp_sim_open_solver(sim, "cpu-direct", 2, pn, pv) == GP_OK
          && gp_sim_set_particles(sim, N, pos, vel, mass, NULL) == GP_OK
          && gp_sim_set_integrator_param(sim, "dt", "0.125") == GP_OK
          && gp_sim_evolve(sim, 0.2) == GP_OK;
    static const char blob[] = "caller state";
    ok = ok && gp_sim_checkpoint_save(sim, base_path, blob, sizeof blob) == GP_OK;
    printf("%s 2 - a valid checkpoint to start from%s%s\n", ok ? "ok" : "not ok", ok ? "" : ": ",
           ok ? "" : gp_sim_last_error(sim));
    gp_sim_free(sim);
    size_t blen = 0;
    unsigned char *base = ok ? fz_read_file(base_path, &blen) : NULL;
    if (!base) { t->failures++; return; }

    buf m = { 0 };
    for (long i = 0; i < cases; ++i) {
        current_case = i;
        buf_set(&m, base, blen);
        last_edit = -1;
        int resealed = 0, rounds = mutate(&m, 0, N);
        if (rounds == 1 && m.len == blen && rnd_below(2)) { resealed = 1; reseal(&m); }
        int same = m.len == blen && memcmp(m.b, base, blen) == 0;
        fz_write_file(path, m.b, m.len);
        alarm(CASE_SECONDS);
        gp_sim *s = NULL;
        gp_sim_new(&s);
        gp_sim_open_solver(s, "cpu-direct", 2, pn, pv);
        char ublob[64];
        size_t ulen = 0;
        gp_status st = gp_sim_checkpoint_load(s, path, ublob, sizeof ublob, &ulen);
        const char *msg = gp_sim_last_error(s);
        char why[256];
        if (same) {
            if (st != GP_OK) fail_case(t, i, "unchanged", msg);
            else t->loaded_same++;
        } else if (!resealed) {
            if (st == GP_OK) fail_case(t, i, "damaged, not resealed", "accepted silently");
            else if (!clear_sentence(msg)) fail_case(t, i, "damaged, not resealed", msg);
            else t->refused++;
        } else if (st != GP_OK) {
            if (!clear_sentence(msg)) fail_case(t, i, "resealed", msg);
            else t->resealed_refused++;
        } else if (!runs_sanely(s, why, sizeof why)) {
            fail_case(t, i, "resealed, accepted", why);
        } else {
            t->resealed_ran++;
        }
        gp_sim_free(s);
        alarm(0);
    }
    free(m.b);
    free(base);
    (void)header_len;
}

/* ---- configs ------------------------------------------------------------------ */

static const char base_config[] =
    "# a valid config touching every group\n"
    "solver = { plugin = \"cpu-tree\"; params = { eps = 0.01; theta = 0.5; }; };\n"
    "initial_conditions = {\n"
    "  model = \"galaxy\";\n"
    "  n = 50000;\n"
    "  seed = 42;\n"
    "  options = { disk_mass = 0.1; };\n"
    "};\n"
    "integrator = { name = \"block-rk2\"; params = { dt = 0.25; eta = 0.15; criterion = \"softening\"; }; };\n"
    "run = { t_end = 5.0; progress = \"never\"; };\n"
    "output = {\n"
    "  dir = \"out/x\";\n"
    "  log_interval = 0.25;\n"
    "  snapshot_interval = 1.25;\n"
    "  checkpoint_interval = 2.5;\n"
    "  lagrangian_fractions = [ 0.1, 0.5, 0.9 ];\n"
    "};\n"
    "switch = ( { at_time = 2.0; plugin = \"cpu-direct\"; params = { eps = 0.01; }; },\n"
    "           { below_active_fraction = 0.01; plugin = \"cpu-tree\"; } );\n";

/* Replaces one value (a number or a string after '=') by an extreme one. */
static void config_extreme(buf *m)
{
    static const char *const vals[] = {
        "0", "-1", "-0", "1e308", "-1e308", "1e309", "nan", "inf", "4294967396", "18446744073709551617",
        "9223372036854775807", "-9223372036854775808", "1e-320", "0x7fffffffffffffff", "\"\"", "\"../../etc\"",
        "\"/dev/null\"", "\"auto\"", "true", "[ ]", "{ }", "( )", "\"\\\\\\\"\"", "1.5", "\"%s%n%x\"",
    };
    size_t eqs[256], ne = 0;
    for (size_t i = 0; i < m->len && ne < 256; ++i)
        if (m->b[i] == '=') eqs[ne++] = i;
    if (!ne) return;
    size_t at = eqs[rnd_below(ne)] + 1, end = at;
    while (end < m->len && m->b[end] != ';' && m->b[end] != '\n') ++end;
    char v[5200];
    if (rnd_below(8) == 0) {                              /* a very long string */
        size_t k = 1 + rnd_below(5000);
        v[0] = '"';
        memset(v + 1, 'x', k);
        v[k + 1] = '"';
        v[k + 2] = '\0';
    } else {
        snprintf(v, sizeof v, " %s", vals[rnd_below(sizeof vals / sizeof vals[0])]);
    }
    size_t vl = strlen(v);
    if (m->len - (end - at) + vl + 64 > m->cap) { m->cap = m->len + vl + 4096; m->b = realloc(m->b, m->cap); }
    memmove(m->b + at + vl, m->b + end, m->len - end);
    memcpy(m->b + at, v, vl);
    m->len = m->len - (end - at) + vl;
}

typedef struct ctally { long parsed, refused, failures, raw_bytes_in_message; } ctally;

static void fuzz_configs(const char *dir, long cases, ctally *t)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/case.cfg", dir);
    /* the unmutated config must parse, or the test proves nothing */
    fz_write_file(path, (const unsigned char *)base_config, sizeof base_config - 1);
    gh_config cfg;
    char err[2048];
    memset(&cfg, 0, sizeof cfg);
    int rc = gh_config_load(path, &cfg, err, sizeof err);
    printf("%s 3 - the valid config to start from parses%s%s\n", rc == 0 ? "ok" : "not ok", rc ? ": " : "", rc ? err : "");
    if (rc == 0) gh_config_free(&cfg);
    if (rc) { t->failures++; return; }

    buf m = { 0 };
    for (long i = 0; i < cases; ++i) {
        current_case = i;
        buf_set(&m, (const unsigned char *)base_config, sizeof base_config - 1);
        mutate(&m, 1, 0);
        fz_write_file(path, m.b, m.len);
        alarm(CASE_SECONDS);
        memset(&cfg, 0, sizeof cfg);
        err[0] = '\0';
        rc = gh_config_load(path, &cfg, err, sizeof err);
        if (rc == 0) {
            t->parsed++;
            gh_config_free(&cfg);
        } else if (strlen(err) < 10) {
            t->failures++;
            if (t->failures <= 10) printf("# FAIL config case %ld: refused without a sentence (\"%s\")\n", i, err);
        } else {
            t->refused++;
            for (const unsigned char *p = (const unsigned char *)err; *p; ++p)
                if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f) { t->raw_bytes_in_message++; break; }
        }
        alarm(0);
    }
    free(m.b);
}

int main(int argc, char **argv)
{
    long cases = argc > 1 ? atol(argv[1]) : 10000;
    rng.s = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (cases < 1) cases = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);   /* lines out before any sanitizer abort */
    signal(SIGALRM, on_alarm);
    char dir[] = "/tmp/gp-fuzz.XXXXXX";
    if (!mkdtemp(dir)) { printf("1..0 # SKIP no temporary directory\n"); return 0; }
    printf("1..4\n");
    /* CRC-32C's standard check value: the checksum is the documented one */
    uint32_t check = gp_crc32c(0, "123456789", 9);
    printf("%s 1 - CRC-32C(\"123456789\") = %08x (the standard check value e3069283)\n",
           check == 0xE3069283u ? "ok" : "not ok", check);

    current = "checkpoint";
    tally t = { 0 };
    fuzz_checkpoints(dir, cases, &t);
    printf("# checkpoints: %ld cases: %ld damaged and refused with a sentence, %ld unchanged and loaded, "
           "%ld deliberate edits refused, %ld deliberate edits loaded and ran 20 steps sanely\n",
           cases, t.refused, t.loaded_same, t.resealed_refused, t.resealed_ran);

    current = "config";
    ctally c = { 0 };
    fuzz_configs(dir, cases, &c);
    printf("# configs: %ld cases: %ld refused with a sentence, %ld parsed\n", cases, c.refused, c.parsed);
    if (c.raw_bytes_in_message)
        printf("# note: %ld config error messages echo control bytes from the file raw (not escaped)\n",
               c.raw_bytes_in_message);
    printf("%s 4 - %ld mutated checkpoints and %ld mutated configs: no crash, hang, sanitizer report or silent "
           "acceptance (%ld failures)\n", t.failures + c.failures ? "not ok" : "ok", cases, cases,
           t.failures + c.failures);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("# could not remove %s\n", dir);
    return t.failures + c.failures ? 1 : 0;
}
