/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-gravhost-restart — gravhost restarts from checkpoints edited as an
 * attacker would: a field changed and both CRC-32C checksums recomputed,
 * so every edit gets past the checksums and reaches the range checks of
 * the library's loader and of gravhost's restart (host_stub/run_checks.c).
 * No crash, hang, sanitizer report or silent acceptance of a state that
 * breaks the run. Built with -fsanitize=address,undefined with gravhost's
 * run objects (tests/fuzz/module.mk) and calls gh_run in this process, one
 * case after another, each under alarm().
 *
 *   fuzz-gravhost-restart [CASES [SEED]]    default 1000 cases, seed 1
 *   GP_FUZZ_SHOW=K also prints the first K refusals and their sentences.
 *
 * Setup: a small run (cpu-direct, plummer n = 32, block-rk2 with a switch
 * at t = 0.125) to t = 0.25 writes the log, snap_0000..0002 (t = 0, 0.125,
 * 0.25) and checkpoint.gpck. A case copies that output directory, edits
 * one to three fields of the checkpoint (a header word, the integrator
 * name, a settings slot, a pos/vel/acc/mass element, an id, a level, a
 * t_last tick, a saved integrator value, any field of gravhost's run state
 * at the end), reseals it and restarts to t_end = 0.5 with gh_run.
 *
 * The oracle, per case:
 *   gh_run returns 1 with a "gravhost: ..." sentence on stderr, or 0 and
 *   then the run reached t_end (the final checkpoint's time), a snapshot of
 *   t_end exists, the log's times never go backwards and all its numbers
 *   are finite;
 *   or, when the case is still running after SOFT_SECONDS, gravhost had
 *   announced a setting from the checkpoint that differs from the config's
 *   (a tiny eta or eps is slow, as it would be from a config) and stops at
 *   two SIGTERMs with rc 143;
 *   either way, no snapshot the restart found was rewritten with another
 *   time (snap_0000 keeps t = 0, ...), and nothing outside the case's
 *   output directory changed (the work directory, the base run's files).
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include "config.h"
#include "checkpoint_bytes.h"
#include "gp_sim.h"
#include "ic.h"
#include "run.h"
#include "snapshot.h"
#include "testlib.h"

/* A case gets SOFT_SECONDS, then SIGTERM twice (gravhost then stops at
 * once with a checkpoint, rc 143): that is a pass only when gravhost
 * announced integrator settings from the checkpoint that differ from the
 * config's (a tiny eta makes a run legitimately slow, as it would from a
 * config). A case still running HARD_SECONDS later is a hang. */
#define SOFT_SECONDS 4
#define HARD_SECONDS 20
#define T_END 0.5

static tl_rng rng;   /* testlib's splitmix64: a seed gives the same cases everywhere */
static uint64_t rnd(void) { return tl_next(&rng); }
static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static volatile long current_case = -1;
static char edits[1024];   /* what the current case changed, for reports */
static int saved_stderr = 2;

static volatile sig_atomic_t soft_expired;
static void on_term(int sig) { (void)sig; }   /* before gh_run installs its own */
static void on_alarm(int sig)
{
    (void)sig;
    if (!soft_expired) {
        soft_expired = 1;
        alarm(HARD_SECONDS);
        raise(SIGTERM);
        raise(SIGTERM);
        return;
    }
    char msg[1400];
    int len = snprintf(msg, sizeof msg, "not ok - case %ld did not finish in %d s (a hang); edits: %s\n",
                       (long)current_case, SOFT_SECONDS + HARD_SECONDS, edits);
    if (len > 0) (void)!write(1, msg, (size_t)len);
    _exit(1);
}

/* ---- files -------------------------------------------------------------------- */

/* The plain files of a directory (no subdirectories in these runs). */
typedef struct listing { size_t n; char name[64][256]; } listing;

static void list_dir(const char *dir, listing *l)
{
    l->n = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && l->n < 64)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            snprintf(l->name[l->n++], sizeof l->name[0], "%s", e->d_name);
    closedir(d);
}

static void remove_dir(const char *dir)
{
    listing l;
    list_dir(dir, &l);
    char p[4400];
    for (size_t i = 0; i < l.n; ++i) {
        snprintf(p, sizeof p, "%s/%s", dir, l.name[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* One line per entry of dir: name, size and modification time, so a
 * changed or added file anywhere in it shows. */
static void fingerprint(const char *dir, char *out, size_t len)
{
    listing l;
    list_dir(dir, &l);
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l.n && k < len; ++i) {
        char p[4400];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, l.name[i]);
        if (stat(p, &st) != 0) continue;
        k += (size_t)snprintf(out + k, len - k, "%s %lld %lld.%09ld\n", l.name[i], (long long)st.st_size,
                              (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    }
}

/* ---- the checkpoint's layout (integrators/sim/checkpoint.c, format 4) ------------- */

/* The header: tests/fuzz/checkpoint_bytes.h. gravhost's run state
 * (host_stub/runner.h), from the blob's start: */
enum {
    S_E0 = 8, S_WALL = 16, S_LOG = 24, S_SNAP = 32, S_COUNT = 40, S_CKPT = 48, S_FIRED = 56,
    S_INTERACTIONS = 64, S_FROM = 72, S_PLUGIN = 76, S_LEN = 592   /* 588 bytes and padding to 8 */
};

typedef struct layout {
    size_t n, n_saved, user_len, n_particle_saved, pos, vel, acc, mass, ids, level, t_last, particle, saved, user;
} layout;

static int get_layout(const unsigned char *b, size_t len, layout *L)
{
    uint64_t n, ns, ul, np;
    if (len < H_END + 8) return -1;
    memcpy(&n, b + H_N, 8);
    memcpy(&ns, b + H_N_SAVED, 8);
    memcpy(&ul, b + H_USER_LEN, 8);
    memcpy(&np, b + H_N_PARTICLE_SAVED, 8);
    if (n > 100000 || ns > 16 || ul > 100000 || np > 4) return -1;
    L->n = n; L->n_saved = ns; L->user_len = ul; L->n_particle_saved = np;
    L->pos = H_END; L->vel = L->pos + 24 * n; L->acc = L->vel + 24 * n; L->mass = L->acc + 24 * n;
    L->ids = L->mass + 8 * n; L->level = L->ids + 8 * n; L->t_last = L->level + n;
    L->particle = L->t_last + 8 * n; L->saved = L->particle + 8 * n * np;
    L->user = L->saved + 8 * ns;
    return L->user + ul + 8 == len ? 0 : -1;
}

/* ---- the edits ---------------------------------------------------------------- */

static void note(const char *fmt, const char *what, size_t off, const char *value)
{
    size_t k = strlen(edits);
    snprintf(edits + k, sizeof edits - k, fmt, k ? "; " : "", what, off, value);
}

/* A 64-bit word: near its old value (the edits an attacker makes to pass
 * the range checks) or an extreme. */
static void edit_u64(unsigned char *b, size_t off, const char *what)
{
    uint64_t v;
    memcpy(&v, b + off, 8);
    static const uint64_t extremes[] = { 0, 1, 2, 3, UINT32_MAX, UINT64_C(1) << 32, INT64_MAX, UINT64_C(1) << 63,
                                         UINT64_MAX, UINT64_MAX - 1 };
    switch (rnd_below(6)) {
    case 0: v += 1; break;
    case 1: v -= 1; break;
    case 2: v += rnd_below(2) ? 2 + rnd_below(30) : -(uint64_t)(2 + rnd_below(30)); break;
    case 3: v = v * 2 + rnd_below(2); break;
    case 4: v = extremes[rnd_below(sizeof extremes / sizeof *extremes)]; break;
    default: v = rnd_below(2) ? rnd() : rnd_below(100); break;
    }
    memcpy(b + off, &v, 8);
    char s[32];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    note("%s%s@%zu=%s", what, off, s);
}

static void edit_double(unsigned char *b, size_t off, const char *what)
{
    double v;
    memcpy(&v, b + off, 8);
    static const double scale[] = { 2, 0.5, -1, 1 + 1e-15, 1e-6, 1e6, 1e-300, 1e300, 3 };
    static const double fixed[] = { 0, -0.0, 0.125, 0.25, 0.375, 1, -1, 1e308, -1e308, 4.9e-324, 2.2250738585072014e-308 };
    switch (rnd_below(5)) {
    case 0: v *= scale[rnd_below(sizeof scale / sizeof *scale)]; break;
    case 1: v = nextafter(v, rnd_below(2) ? INFINITY : -INFINITY); break;
    case 2: v = fixed[rnd_below(sizeof fixed / sizeof *fixed)]; break;
    case 3: v = rnd_below(3) == 0 ? NAN : rnd_below(2) ? INFINITY : -INFINITY; break;
    default: { uint64_t bits = rnd(); memcpy(&v, &bits, 8); break; }
    }
    memcpy(b + off, &v, 8);
    char s[40];
    snprintf(s, sizeof s, "%.17g", v);
    note("%s%s@%zu=%s", what, off, s);
}

/* A fixed-size name field: another integrator or plugin name, a path,
 * control bytes, no terminator at all. */
static void edit_name(unsigned char *b, size_t off, size_t size, const char *what)
{
    static const char *const names[] = { "leapfrog", "rk2", "rk4", "rk8pd", "block-kdk", "block-rk2", "hold-kdk",
                                         "cpu-direct", "cpu-tree", "cuda-tree", "mpi-tree", "auto", "",
                                         "/tmp/evil.so", "../plugins/x", "block-rk2 ", "BLOCK-RK2", "a\nb", "%s%n" };
    char s[600];
    size_t k = rnd_below(sizeof names / sizeof *names + 2);
    if (k < sizeof names / sizeof *names) {
        memset(b + off, 0, size);
        memcpy(b + off, names[k], strlen(names[k]) < size ? strlen(names[k]) : size - 1);
        snprintf(s, sizeof s, "\"%s\"", names[k]);
    } else if (k == sizeof names / sizeof *names) {
        memset(b + off, 'x', size);                   /* no terminator */
        snprintf(s, sizeof s, "%zu x's, unterminated", size);
    } else {
        size_t at = rnd_below(size);
        b[off + at] = (unsigned char)rnd();           /* one byte anywhere */
        snprintf(s, sizeof s, "byte %zu = 0x%02x", at, b[off + at]);
    }
    note("%s%s@%zu=%s", what, off, s);
}

/* One field edit, by kind (weights: run state 30%, header 25%, particles
 * 25%, settings 12%, saved values 8%). */
static void edit_field(unsigned char *b, const layout *L)
{
    size_t u = L->user, r = rnd_below(100);
    static const char *const state_names[] = { "E0", "wall", "log_index", "snap_index", "snap_count", "ckpt_index",
                                               "switch_fired", "interactions" };
    if (r < 30 && L->user_len >= S_LEN) {                 /* gravhost's run state */
        size_t f = rnd_below(11);
        if (f < 2) edit_double(b, u + S_E0 + 8 * f, state_names[f]);
        else if (f < 8) edit_u64(b, u + S_E0 + 8 * f, state_names[f]);
        else if (f == 8) {
            static const int32_t from[] = { -2, -1, 0, 1, 2, 63, 64, INT32_MAX, INT32_MIN, 1000000 };
            int32_t v = from[rnd_below(sizeof from / sizeof *from)];
            memcpy(b + u + S_FROM, &v, 4);
            char s[16];
            snprintf(s, sizeof s, "%d", (int)v);
            note("%s%s@%zu=%s", "params_from", u + S_FROM, s);
        } else if (f == 9) edit_name(b, u + S_PLUGIN, 512, "plugin");
        else {
            size_t at = rnd_below(8);
            b[u + at] ^= (unsigned char)(1u << rnd_below(8));
            note("%s%s@%zu=%s", "state magic", u + at, "a bit flipped");
        }
    } else if (r < 55) {                                  /* header */
        static const char *const words[] = { "version", "header_crc", "n", "started", "max_level", "now",
                                             "user_len", "n_saved" };
        static const char *const counters[] = { "steps", "force_calls", "particle_forces", "diag_force_calls",
                                                "last_active", "solver_swaps", "syncs" };
        size_t f = rnd_below(8 + 1 + 3 + 7);
        if (f < 8) {
            if (f == 1) f = 5;                            /* the CRC is resealed anyway */
            edit_u64(b, 8 + 8 * f, words[f]);
        } else if (f == 8) edit_name(b, H_INTEGRATOR, 32, "integrator");
        else if (f < 12) edit_double(b, 104 + 8 * (f - 9), f == 9 ? "time" : f == 10 ? "dt_max" : "t0");
        else edit_u64(b, H_COUNTERS + 8 * (f - 12), counters[f - 12]);
    } else if (r < 80) {                                  /* particles */
        size_t i = rnd_below(L->n), a = rnd_below(7);
        if (a < 3) {
            static const char *const arr[] = { "pos", "vel", "acc" };
            size_t base = a == 0 ? L->pos : a == 1 ? L->vel : L->acc;
            edit_double(b, base + 8 * (3 * i + rnd_below(3)), arr[a]);
        } else if (a == 3) edit_double(b, L->mass + 8 * i, "mass");
        else if (a == 4) {
            if (rnd_below(2)) {                           /* another particle's id */
                size_t j = rnd_below(L->n);
                memcpy(b + L->ids + 8 * i, b + L->ids + 8 * j, 8);
                note("%s%s@%zu=%s", "id", L->ids + 8 * i, "copied from another particle");
            } else edit_u64(b, L->ids + 8 * i, "id");
        } else if (a == 5) {
            unsigned char old = b[L->level + i], v;
            switch (rnd_below(4)) {
            case 0: v = (unsigned char)(old + 1); break;
            case 1: v = (unsigned char)(old - 1); break;
            case 2: v = (unsigned char)rnd_below(40); break;
            default: v = (unsigned char)rnd(); break;
            }
            b[L->level + i] = v;
            char s[8];
            snprintf(s, sizeof s, "%u", v);
            note("%s%s@%zu=%s", "level", L->level + i, s);
        } else edit_u64(b, L->t_last + 8 * i, "t_last");
    } else if (r < 92) {                                  /* the integrator's settings */
        edit_double(b, H_SETTINGS + 8 * rnd_below(8), "settings");
    } else if (L->n_saved) {                              /* its saved values */
        edit_double(b, L->saved + 8 * rnd_below(L->n_saved), "saved");
    } else {
        edit_double(b, H_SETTINGS + 8 * rnd_below(8), "settings");
    }
}

/* ---- the oracle ----------------------------------------------------------------- */

typedef struct tally { long refused, ran, ran_noted, slow_announced, failures; } tally;
static tally T;
static long shown_refusals;

static void fail_case(long i, const char *why)
{
    T.failures++;
    if (T.failures <= 10) printf("# FAIL case %ld: %s\n#   edits: %s\n", i, why, edits);
}

/* Time of a snapshot file, or NAN. */
static double snap_time(const char *path)
{
    gp_ic ic;
    double t = NAN;
    char err[512];
    memset(&ic, 0, sizeof ic);
    if (gp_snapshot_read(path, &ic, &t, err, sizeof err) != 0) return NAN;
    gp_ic_free(&ic);
    return t;
}

/* The log: times never decrease, every number in it finite. */
static int log_sane(const char *path, char *why, size_t len)
{
    size_t n = 0;
    char *text = (char *)fz_read_file(path, &n);
    if (!text) { snprintf(why, len, "no log"); return 0; }
    double last = -INFINITY;
    int ok = 1, lines = 0;
    for (char *line = strtok(text, "\n"); line && ok; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || strncmp(line, "time\t", 5) == 0) continue;
        lines++;
        int col = 0;
        for (char *f = line; f && ok; ++col) {
            char *tab = strchr(f, '\t');
            if (tab) *tab = '\0';
            char *end;
            double v = strtod(f, &end);
            if (end != f && *end == '\0') {
                if (!isfinite(v)) { snprintf(why, len, "log column %d holds %s", col, f); ok = 0; }
                if (col == 0 && v < last) { snprintf(why, len, "log time went from %g back to %g", last, v); ok = 0; }
                if (col == 0) last = v;
            } else if (col == 0) {
                snprintf(why, len, "log line starts with \"%.40s\"", f);
                ok = 0;
            }
            f = tab ? tab + 1 : NULL;
        }
    }
    if (ok && last < T_END * (1 - 1e-12)) { snprintf(why, len, "the log ends at t = %g, not %g", last, T_END); ok = 0; }
    if (ok && lines == 0) { snprintf(why, len, "no log lines"); ok = 0; }
    free(text);
    return ok;
}

/* A sentence from gravhost: a line "gravhost: ..." that says something. */
static int has_sentence(const char *err)
{
    for (const char *p = err; p && *p; ) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 30 && strncmp(p, "gravhost: ", 10) == 0 && strncmp(p, "gravhost: note:", 15) != 0
            && strncmp(p, "gravhost: warning:", 18) != 0)
            return 1;
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

static const char config_text[] =
    "solver = { plugin = \"cpu-direct\"; params = { eps = 0.05; threads = 1; }; };\n"
    "initial_conditions = { model = \"plummer\"; n = 32; seed = 5; };\n"
    "integrator = { name = \"block-rk2\"; params = { dt = 0.125; eta = 0.1; }; };\n"
    "run = { t_end = 0.5; progress = \"never\"; };\n"
    "output = { log_interval = 0.125; snapshot_interval = 0.125; checkpoint_interval = 0.25; };\n"
    "switch = ( { at_time = 0.125; plugin = \"cpu-direct\"; } );\n";

int main(int argc, char **argv)
{
    long cases = argc > 1 ? atol(argv[1]) : 1000;
    rng.s = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (cases < 1) cases = 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_alarm);
    signal(SIGTERM, on_term);
    char top[] = "/tmp/gp-fuzz-restart.XXXXXX";
    if (!mkdtemp(top)) { printf("1..0 # SKIP no temporary directory\n"); return 0; }
    if (chdir(top) != 0) { printf("1..0 # SKIP cannot enter %s\n", top); return 0; }
    printf("1..3\n");

    /* sanitizer reports go to the real stderr, not a case's capture file */
    saved_stderr = dup(2);
    __sanitizer_set_report_fd((void *)(intptr_t)saved_stderr);

    char cfg_path[4200], base[4200], err[2048];
    snprintf(cfg_path, sizeof cfg_path, "%s/run.cfg", top);
    snprintf(base, sizeof base, "%s/base", top);
    fz_write_file(cfg_path, (const unsigned char *)config_text, sizeof config_text - 1);
    gh_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if (gh_config_load(cfg_path, &cfg, err, sizeof err) != 0) {
        printf("not ok 1 - the config parses: %s\n", err);
        return 1;
    }
    gh_run_opts o = { 0 };
    o.out_dir = base;
    o.have_t_end = 1;
    o.t_end = 0.25;
    o.progress = -1;
    int rc = gh_run(&cfg, &o);
    char ck_path[4400];
    snprintf(ck_path, sizeof ck_path, "%s/checkpoint.gpck", base);
    size_t blen = 0;
    unsigned char *good = rc == 0 ? fz_read_file(ck_path, &blen) : NULL;
    layout L;
    int ok = good && get_layout(good, blen, &L) == 0 && L.user_len == S_LEN;
    printf("%s 1 - a run to t = 0.25 writes a checkpoint of the expected layout (rc %d, %zu bytes)\n",
           ok ? "ok" : "not ok", rc, blen);
    if (!ok) return 1;

    /* the base run's files, copied into every case's directory */
    listing base_files;
    list_dir(base, &base_files);
    unsigned char *content[64];
    size_t clen[64];
    double before_time[64];
    for (size_t i = 0; i < base_files.n; ++i) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", base, base_files.name[i]);
        content[i] = fz_read_file(p, &clen[i]);
        before_time[i] = strncmp(base_files.name[i], "snap_", 5) == 0 ? snap_time(p) : NAN;
    }

    /* the unedited checkpoint restarts and passes the oracle: else the
     * oracle proves nothing */
    char top_print[8192], base_print[8192];
    fingerprint(top, top_print, sizeof top_print);
    fingerprint(base, base_print, sizeof base_print);
    unsigned char *m = malloc(blen);
    long intact_failures = 0;
    for (long i = -1; i < cases; ++i) {
        current_case = i;
        edits[0] = '\0';
        memcpy(m, good, blen);
        if (i >= 0) {
            int rounds = rnd_below(4) == 0 ? 2 + (int)rnd_below(2) : 1;
            for (int k = 0; k < rounds; ++k) edit_field(m, &L);
            fz_reseal(m, blen);
        }
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/case", top);
        mkdir(dir, 0777);
        for (size_t f = 0; f < base_files.n; ++f) {
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", dir, base_files.name[f]);
            if (strcmp(base_files.name[f], "checkpoint.gpck") == 0) fz_write_file(p, m, blen);
            else fz_write_file(p, content[f], clen[f]);
        }
        char err_path[4400];
        snprintf(err_path, sizeof err_path, "%s/stderr.txt", top);
        int efd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        fflush(stderr);
        dup2(efd, 2);
        close(efd);

        soft_expired = 0;
        alarm(SOFT_SECONDS);
        gh_run_opts ro = { 0 };
        ro.restart = "";
        ro.out_dir = dir;
        ro.progress = -1;
        rc = gh_run(&cfg, &ro);
        fflush(stderr);
        dup2(saved_stderr, 2);

        size_t elen = 0;
        char *etext = (char *)fz_read_file(err_path, &elen);
        unlink(err_path);
        char why[1024] = "";
        int good_case = 1;
        int announced = etext && strstr(etext, "gravhost: note: the checkpoint holds integrator.params.");
        if (soft_expired) {
            if (rc != 128 + SIGTERM || !announced) {
                snprintf(why, sizeof why, "still running after %d s without an announced setting (rc %d after SIGTERM; "
                         "stderr: \"%.300s\")", SOFT_SECONDS, rc, etext ? etext : "");
                good_case = 0;
            }
        } else if (rc == 1) {
            if (!etext || !has_sentence(etext)) {
                snprintf(why, sizeof why, "refused without a gravhost sentence (stderr: \"%.300s\")", etext ? etext : "");
                good_case = 0;
            }
        } else if (rc != 0) {
            snprintf(why, sizeof why, "gh_run returned %d (stderr: \"%.300s\")", rc, etext ? etext : "");
            good_case = 0;
        } else {
            /* accepted: the run must have gone to its end, sanely */
            char p[4400];
            snprintf(p, sizeof p, "%s/checkpoint.gpck", dir);
            gp_sim *probe = NULL;
            gp_sim_new(&probe);
            double t_final = gp_sim_checkpoint_load(probe, p, NULL, 0, NULL) == GP_OK ? gp_sim_time(probe) : NAN;
            gp_sim_free(probe);
            snprintf(p, sizeof p, "%s/diagnostics.tsv", dir);
            if (!(fabs(t_final - T_END) < 1e-12)) {
                snprintf(why, sizeof why, "rc 0 but the final checkpoint is at t = %g, not %g", t_final, T_END);
                good_case = 0;
            } else if (!log_sane(p, why, sizeof why)) {
                good_case = 0;
            } else {
                listing after;
                list_dir(dir, &after);
                int end_snap = 0;
                for (size_t f = 0; f < after.n && !end_snap; ++f)
                    if (strncmp(after.name[f], "snap_", 5) == 0) {
                        snprintf(p, sizeof p, "%s/%s", dir, after.name[f]);
                        end_snap = fabs(snap_time(p) - T_END) < 1e-12;
                    }
                if (!end_snap) {
                    snprintf(why, sizeof why, "rc 0 but no snapshot of t = %g was written", T_END);
                    good_case = 0;
                }
            }
        }
        /* either way: the snapshots found at the restart keep their times */
        for (size_t f = 0; f < base_files.n && good_case; ++f) {
            if (isnan(before_time[f])) continue;
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", dir, base_files.name[f]);
            double t = snap_time(p);
            if (t != before_time[f]) {
                snprintf(why, sizeof why, "%s held t = %g before the restart and t = %g after (rc %d)",
                         base_files.name[f], before_time[f], t, rc);
                good_case = 0;
            }
        }
        /* ... and nothing outside the output directory changed */
        char now_print[8192];
        if (good_case) {
            fingerprint(base, now_print, sizeof now_print);
            if (strcmp(now_print, base_print) != 0) {
                snprintf(why, sizeof why, "the base run's directory changed:\n%.400s", now_print);
                good_case = 0;
            }
        }
        if (good_case) {
            fingerprint(top, now_print, sizeof now_print);
            char *c = strstr(now_print, "case ");   /* the case directory itself changes */
            if (c) { char *e = strchr(c, '\n'); memmove(c, e + 1, strlen(e + 1) + 1); }
            char want[8192];
            snprintf(want, sizeof want, "%s", top_print);
            if (strcmp(now_print, want) != 0) {
                snprintf(why, sizeof why, "files outside the output directory changed:\n%.400s", now_print);
                good_case = 0;
            }
        }
        alarm(0);
        if (i < 0) {
            if (!(good_case && rc == 0)) intact_failures++;
            printf("%s 2 - the unedited checkpoint restarts and passes the oracle (rc %d)%s%s\n",
                   good_case && rc == 0 ? "ok" : "not ok", rc, why[0] ? ": " : "", why);
        } else if (!good_case) {
            fail_case(i, why);
        } else if (soft_expired) {
            T.slow_announced++;
            if (getenv("GP_FUZZ_SHOW")) printf("# slow, announced: %s\n", edits);
        } else if (rc == 1) {
            T.refused++;
            if (getenv("GP_FUZZ_SHOW") && shown_refusals++ < atol(getenv("GP_FUZZ_SHOW")))
                printf("# refused: %s\n#   -> %.300s", edits, etext ? etext : "");
        } else if (etext && strstr(etext, "gravhost: note:")) {
            T.ran_noted++;
        } else {
            T.ran++;
        }
        free(etext);
        remove_dir(dir);
    }
    printf("# %ld cases: %ld refused with a sentence, %ld accepted and ran to t = %g sanely (%ld of them with a note "
           "about what differs), %ld accepted with a note on a differing setting and stopped by SIGTERM after %d s "
           "(slow, as the same setting in a config would be)\n", cases, T.refused, T.ran + T.ran_noted, T_END,
           T.ran_noted, T.slow_announced, SOFT_SECONDS);
    printf("%s 3 - %ld checkpoints edited with the checksums recomputed: no crash, hang, sanitizer report or "
           "acceptance that breaks the run (%ld failures)\n", T.failures ? "not ok" : "ok", cases, T.failures);
    for (size_t i = 0; i < base_files.n; ++i) free(content[i]);
    free(m);
    free(good);
    gh_config_free(&cfg);
    remove_dir(base);
    unlink(cfg_path);
    if (chdir("/") == 0) rmdir(top);
    return T.failures || intact_failures ? 1 : 0;
}
