/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-fuzz-failures — one gravhost-mpi rank failing alone, many cases in
 * one MPI job of two ranks: gravhost-mpi's run entry point (gh_run, with
 * par_mpi.c under it) called case after case, the failure injected by
 * this driver on one rank. Starting two ranks costs far more than a case,
 * so one start serves them all.
 *
 * Setup: an uninterrupted run to t = 0.5 (ref), a run stopped at t = 0.25
 * (seed) and one at t = 0.125 (early), 256 Plummer particles on mpi-tree,
 * leapfrog dt = 1/32, checkpoints every 0.125. Every case copies seed's
 * set and fails one rank, drawn at random, in one of two ways:
 *   write: the rank under a file size limit (RLIMIT_FSIZE, 1 to 48 KiB,
 *          SIGXFSZ ignored: EFBIG, as a full disk), set before its gh_run
 *          and restored after; or one of its output names (the staged
 *          FILE.new, FILE.new.tmp, FILE.tmp, rank 0's next snapshot's
 *          .tmp) taken by a directory; the restart runs to t = 0.375 or 0.5;
 *   read:  the rank's checkpoint file truncated, a byte changed, removed,
 *          emptied, made a directory or a FIFO, or replaced by the other
 *          rank's file or by its own from the stop at t = 0.125.
 * The oracle, per case: every gh_run returns within LIMIT_S seconds (no
 * hang: an alarm fails the case and ends the job), a crash ends the job
 * (and the TAP plan is not met); every rank returns the same status, 0 or
 * 1, never 128 + a signal; a failed run says why on a "gravhost:" line; a
 * read failure is refused (1) and leaves the other rank's file as it was;
 * then, the cause removed, a restart from what the directory holds runs to
 * t = 0.5 and its last snapshot equals the uninterrupted run's bit for
 * bit: no checkpoint set was lost. Nothing outside the case's directory
 * changes (the fuzz's folder and everything in it but the case: names,
 * types, sizes, mtimes; the ranks' working directory stays empty), and no
 * rank holds more descriptors after a case than before the first.
 *
 *   mpirun -np 2 mpi-fuzz-failures [CASES [SEED]]    default 6 cases, seed 1
 *   GP_FUZZ_VERBOSE=1: every case's sentences as TAP comments.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "fuzz/checkpoint_bytes.h"   /* fz_read_file, fz_write_file */
#include "par.h"
#include "run.h"
#include "snapshot.h"
#include "testlib.h"                 /* tl_rng */

enum { LIMIT_S = 45 };               /* a gh_run of these cases takes well under a second */
#define CK "checkpoint.gpck.%dof2"

static const char config_text[] =
    "solver = { plugin = \"mpi-tree\"; params = { eps = 0.05; theta = 0.5; }; };\n"
    "initial_conditions = { model = \"plummer\"; n = 256; seed = 5; };\n"
    "integrator = { name = \"leapfrog\"; params = { dt = 0.03125; }; };\n"
    "run = { t_end = 0.5; progress = \"never\"; };\n"
    "output = { log_interval = 0.125; snapshot_interval = 0.25; checkpoint_interval = 0.125; };\n";

static int rank_;
static tl_rng rng;   /* the same seed on every rank: the same draws */
static size_t below(size_t n) { return (size_t)(tl_next(&rng) % n); }
static double uniform(void) { return tl_uniform(&rng); }

/* ---- a hang: the alarm's report ------------------------------------------------ */

static char current[1024];   /* "N - what", for the alarm's line */

static void on_alarm(int sig)
{
    (void)sig;
    char msg[1200];
    int len = rank_ == 0 ? snprintf(msg, sizeof msg, "not ok %s: a gh_run did not return within %d s (a hang)\n",
                                    current, (int)LIMIT_S)
                         : snprintf(msg, sizeof msg, "# rank %d: case %s: gh_run did not return within %d s\n",
                                    rank_, current, (int)LIMIT_S);
    if (len > 0) (void)!write(1, msg, (size_t)len);
    _exit(1);
}

/* ---- files ---------------------------------------------------------------------- */

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st; (void)flag; (void)f;
    return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}

/* rm -rf p (a file, FIFO or tree; no link followed). */
static void remove_tree(const char *p)
{
    struct stat st;
    if (lstat(p, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) nftw(p, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    else remove(p);
}

/* The plain files of src copied into dst (made). */
static int copy_dir(const char *src, const char *dst)
{
    if (mkdir(dst, 0700) != 0) return -1;
    DIR *d = opendir(src);
    if (!d) return -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) && rc == 0) {
        if (e->d_name[0] == '.') continue;
        char a[4400], b[4400];
        snprintf(a, sizeof a, "%s/%s", src, e->d_name);
        snprintf(b, sizeof b, "%s/%s", dst, e->d_name);
        size_t n = 0;
        unsigned char *bytes = fz_read_file(a, &n);
        rc = bytes && fz_write_file(b, bytes, n) == 0 ? 0 : -1;
        free(bytes);
    }
    closedir(d);
    return rc;
}

static int same_file(const char *path, const unsigned char *bytes, size_t n)
{
    size_t m = 0;
    unsigned char *now = fz_read_file(path, &m);
    int same = now && m == n && memcmp(now, bytes, n) == 0;
    free(now);
    return same;
}

/* Everything under the fuzz's folder but the case's: one line per entry
 * (path, type and mode, size, mtime), so a change anywhere shows. */
static char *print_buf;
static size_t print_len, print_cap;
static const char *print_skip;

static int print_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)flag;
    size_t k0 = strlen(print_skip);
    if (f->level == 0 || (strncmp(p, print_skip, k0) == 0 && (p[k0] == '\0' || p[k0] == '/'))) return 0;
    char line[4600];
    int k = snprintf(line, sizeof line, "%s %o %lld %lld.%09ld\n", p, (unsigned)st->st_mode, (long long)st->st_size,
                     (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
    if (k < 0) return 0;
    if (print_len + (size_t)k + 1 > print_cap) {
        print_cap = 2 * (print_cap + (size_t)k + 1);
        print_buf = realloc(print_buf, print_cap);
        if (!print_buf) return -1;
    }
    memcpy(print_buf + print_len, line, (size_t)k + 1);
    print_len += (size_t)k;
    return 0;
}

static char *fingerprint(const char *root, const char *skip)
{
    print_buf = NULL;
    print_len = print_cap = 0;
    print_skip = skip;
    nftw(root, print_one, 16, FTW_PHYS);
    return print_buf ? print_buf : strdup("");
}

static int open_descriptors(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)); ) n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;   /* the listing's own */
}

/* ---- one gh_run, its stderr captured ------------------------------------------- */

typedef struct outcome {
    int rc;         /* gh_run's status on this rank */
    char err[8192]; /* this rank's stderr */
} outcome;

/* Runs gh_run on every rank with stderr in a pipe (not a file: a file size
 * limit must not strike the capture); fsize_kib > 0: this rank under that
 * file size limit for the run. Collective. */
static void run(const gh_config *cfg, const char *out, const char *restart, double t_end, long fsize_kib,
                outcome *o)
{
    gh_run_opts opts = { 0 };
    opts.restart = restart;
    opts.out_dir = out;
    opts.progress = -1;
    opts.have_t_end = t_end > 0;
    opts.t_end = t_end;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) { perror("pipe"); MPI_Abort(MPI_COMM_WORLD, 1); }
    fcntl(pipefd[1], F_SETPIPE_SZ, 1 << 20);
    fcntl(pipefd[1], F_SETFL, O_NONBLOCK);   /* a full pipe drops text, never blocks */
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    int saved = dup(2);
    dup2(pipefd[1], 2);
    close(pipefd[1]);
    struct rlimit was;
    getrlimit(RLIMIT_FSIZE, &was);
    if (fsize_kib > 0) {
        struct rlimit lim = was;
        lim.rlim_cur = (rlim_t)fsize_kib * 1024;
        setrlimit(RLIMIT_FSIZE, &lim);
    }
    alarm(LIMIT_S);
    o->rc = gh_run(cfg, &opts);
    alarm(0);
    if (fsize_kib > 0) setrlimit(RLIMIT_FSIZE, &was);
    dup2(saved, 2);
    close(saved);
    ssize_t k = read(pipefd[0], o->err, sizeof o->err - 1);
    o->err[k > 0 ? k : 0] = '\0';
    close(pipefd[0]);
}

/* Every rank's status the same; 0: they are, and *rc is it. Collective. */
static int agreed_rc(int mine, int *rc)
{
    int lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    *rc = lo == hi ? lo : hi;
    return lo == hi ? 0 : -1;
}

/* A line "gravhost: ..." that is neither a note nor a warning. */
static int has_sentence(const char *err)
{
    for (const char *p = err; *p; ) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 20 && strncmp(p, "gravhost: ", 10) == 0 && strncmp(p, "gravhost: note:", 15) != 0
            && strncmp(p, "gravhost: warning:", 18) != 0)
            return 1;
        if (!nl) break;
        p = nl + 1;
    }
    return 0;
}

/* The last line of text (for reports), into buf. */
static const char *last_line(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    while (n && text[n - 1] == '\n') --n;
    size_t s = n;
    while (s && text[s - 1] != '\n') --s;
    snprintf(buf, len, "%.*s", (int)(n - s > 300 ? 300 : n - s), text + s);
    return buf;
}

/* ---- the snapshots ---------------------------------------------------------------- */

static int last_snapshot(const char *dir, char *path, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    char best[256] = "";
    for (struct dirent *e; (e = readdir(d)); ) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "snap_", 5) == 0 && n > 3 && strcmp(e->d_name + n - 3, ".h5") == 0
            && strcmp(e->d_name, best) > 0 && n < sizeof best)
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0]) return -1;
    snprintf(path, len, "%s/%s", dir, best);
    return 0;
}

typedef struct snap { gp_ic ic; double t; } snap;

static int read_snap(const char *dir, snap *s)
{
    char path[4400], err[512];
    memset(s, 0, sizeof *s);
    return last_snapshot(dir, path, sizeof path) == 0 && gp_snapshot_read(path, &s->ic, &s->t, err, sizeof err) == 0
           ? 0 : -1;
}

static int same_snap(const snap *a, const snap *b)
{
    size_t n = a->ic.n;
    return n == b->ic.n && a->t == b->t && memcmp(a->ic.pos, b->ic.pos, 3 * n * sizeof(double)) == 0
           && memcmp(a->ic.vel, b->ic.vel, 3 * n * sizeof(double)) == 0
           && memcmp(a->ic.mass, b->ic.mass, n * sizeof(double)) == 0
           && memcmp(a->ic.id, b->ic.id, n * sizeof(uint64_t)) == 0;
}

/* ---- the cases -------------------------------------------------------------------- */

typedef struct fault {
    char what[512];
    int rank;           /* the rank that fails */
    int read;           /* 1: a read failure, 0: a write failure */
    long fsize_kib;     /* write: the rank's file size limit, or 0 */
    char blocker[4400]; /* write: the name taken by a directory, or "" */
    double t_end;       /* write: the restart's end */
    char path[4400];    /* read: the damaged file */
    unsigned char *good, *other;   /* read: its bytes and the other rank's */
    size_t good_len, other_len;
} fault;

enum { K_LIMIT, K_NAME, K_READ };   /* the kinds, for the tally */

/* Draws a write failure (every rank draws alike; rank 0 makes the name). */
static void draw_write(const char *d, fault *f)
{
    static const char *const ends[] = { ".new", ".new.tmp", ".tmp" };
    f->t_end = below(2) ? 0.5 : 0.375;
    if (uniform() < 0.5) {
        f->fsize_kib = 1 + (long)below(48);
        snprintf(f->what, sizeof f->what, "write: rank %d under a file size limit of %ld KiB", f->rank, f->fsize_kib);
    } else {
        char name[256];
        size_t k = below(f->rank == 0 ? 4 : 3);
        if (k == 3) snprintf(name, sizeof name, "snap_0002.h5.tmp");
        else snprintf(name, sizeof name, CK "%s", f->rank, ends[k]);
        snprintf(f->blocker, sizeof f->blocker, "%s/%s", d, name);
        snprintf(f->what, sizeof f->what, "write: rank %d's %s taken by a directory", f->rank, name);
        if (rank_ == 0) {
            char x[4500];
            snprintf(x, sizeof x, "%s/x", f->blocker);
            mkdir(f->blocker, 0700);
            mkdir(x, 0700);
        }
    }
    size_t k = strlen(f->what);
    snprintf(f->what + k, sizeof f->what - k, ", restarted to t = %g", f->t_end);
}

/* Draws a read failure (every rank draws alike; rank 0 damages the
 * failing rank's checkpoint). */
static void draw_read(const char *d, const char *seed, const char *early, fault *f)
{
    char good[4400], other[4400], from[4400];
    snprintf(f->path, sizeof f->path, "%s/" CK, d, f->rank);
    /* the bytes from seed's set, which the case's is a copy of: every rank
     * reads them while rank 0 damages the case's */
    snprintf(good, sizeof good, "%s/" CK, seed, f->rank);
    snprintf(other, sizeof other, "%s/" CK, seed, 1 - f->rank);
    f->good = fz_read_file(good, &f->good_len);
    f->other = fz_read_file(other, &f->other_len);
    if (!f->good || !f->other || !f->good_len) { printf("Bail out! cannot read the set in %s\n", d); exit(1); }
    size_t kind = below(8), at = below(f->good_len);
    unsigned flip = 1 + (unsigned)below(255);
    const char *w = "";
    char how[128];
    int mine = rank_ == 0;
    switch (kind) {
    case 0:
        snprintf(how, sizeof how, "truncated to %zu of %zu bytes", at, f->good_len);
        w = how;
        if (mine) fz_write_file(f->path, f->good, at);
        break;
    case 1:
        snprintf(how, sizeof how, "byte %zu changed", at);
        w = how;
        if (mine) {
            f->good[at] ^= (unsigned char)flip;
            fz_write_file(f->path, f->good, f->good_len);
            f->good[at] ^= (unsigned char)flip;
        }
        break;
    case 2: w = "removed"; if (mine) remove(f->path); break;
    case 3: w = "emptied"; if (mine) fz_write_file(f->path, f->good, 0); break;
    case 4: {
        w = "a directory";
        char x[4500];
        snprintf(x, sizeof x, "%s/x", f->path);
        if (mine) { remove(f->path); mkdir(f->path, 0700); mkdir(x, 0700); }
        break;
    }
    case 5: w = "a FIFO"; if (mine) { remove(f->path); mkfifo(f->path, 0600); } break;
    case 6: w = "the other rank's file"; if (mine) fz_write_file(f->path, f->other, f->other_len); break;
    default: {
        w = "its own from the stop at t = 0.125";
        snprintf(from, sizeof from, "%s/" CK, early, f->rank);
        size_t n = 0;
        unsigned char *b = mine ? fz_read_file(from, &n) : NULL;
        if (mine && (!b || fz_write_file(f->path, b, n) != 0)) { printf("Bail out! cannot copy %s\n", from); exit(1); }
        free(b);
    }
    }
    snprintf(f->what, sizeof f->what, "read: rank %d's checkpoint %s", f->rank, w);
}

/* One more reason a case failed, after those in why. */
static __attribute__((format(printf, 3, 4))) void append(char *why, size_t len, const char *fmt, ...)
{
    size_t k = strlen(why);
    if (k && k + 3 < len) k += (size_t)snprintf(why + k, len - k, "; ");
    va_list ap;
    va_start(ap, fmt);
    if (k + 1 < len) vsnprintf(why + k, len - k, fmt, ap);
    va_end(ap);
}

/* MPI_Barrier that sleeps while it waits: rank 0 prepares and checks the
 * cases while rank 1 waits, and a spinning wait would take the core it
 * needs (two ranks often share one). Collective. */
static void settle(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (int done = 0; MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done; )
        nanosleep(&(struct timespec){ 0, 200000 }, NULL);
}

int main(int argc, char **argv)
{
    /* waits in MPI yield the core (the ranks outnumber the cores on the
     * test machines; a spinning wait starves the rank it waits for) */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    if (gh_par_init(&argc, &argv) != 0) return 1;
    rank_ = gh_par_rank();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (gh_par_size() != 2) {
        if (rank_ == 0) printf("Bail out! run on 2 ranks (mpirun -np 2), not %d\n", gh_par_size());
        gh_par_finalize();
        return 1;
    }
    long cases = argc > 1 ? atol(argv[1]) : 6;
    unsigned long long seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    rng.s = seed;
    int verbose = getenv("GP_FUZZ_VERBOSE") && atoi(getenv("GP_FUZZ_VERBOSE")) > 0;
    signal(SIGALRM, on_alarm);
    signal(SIGXFSZ, SIG_IGN);   /* EFBIG, as a full disk, rather than the signal */

    /* the fuzz's folder, rank 0's name on every rank */
    char root[4096] = "";
    if (rank_ == 0) {
        const char *tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
        snprintf(root, sizeof root, "%s/mpi-fuzz-failures.XXXXXX", tmp);
        if (!mkdtemp(root)) root[0] = '\0';
    }
    MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!root[0]) {
        if (rank_ == 0) printf("Bail out! no temporary folder\n");
        gh_par_finalize();
        return 1;
    }
    char cfg_path[4200], ref[4200], seed_dir[4200], early[4200], d[4200], cwd[4200];
    snprintf(cfg_path, sizeof cfg_path, "%s/p.cfg", root);
    snprintf(ref, sizeof ref, "%s/ref", root);
    snprintf(seed_dir, sizeof seed_dir, "%s/seed", root);
    snprintf(early, sizeof early, "%s/early", root);
    snprintf(d, sizeof d, "%s/case", root);
    snprintf(cwd, sizeof cwd, "%s/cwd", root);   /* the ranks' working directory: stays empty */
    if (rank_ == 0) {
        fz_write_file(cfg_path, (const unsigned char *)config_text, sizeof config_text - 1);
        mkdir(cwd, 0700);
    }
    settle();
    if (chdir(cwd) != 0) { printf("Bail out! cannot enter %s\n", cwd); MPI_Abort(MPI_COMM_WORLD, 1); }
    gh_config cfg;
    char err[2048];
    int parsed = gh_config_load(cfg_path, &cfg, err, sizeof err) == 0;
    if (gh_par_agree(parsed ? 0 : -1, err, sizeof err) != 0) {
        if (rank_ == 0) printf("Bail out! the config: %s\n", err);
        gh_par_finalize();
        return 1;
    }

    /* the runs the cases start from, and the end they must reach */
    static outcome o1, o2;
    int rc1 = 0, rc2 = 0, rc3 = 0;
    snprintf(current, sizeof current, "0 - setup");
    run(&cfg, ref, NULL, 0, 0, &o1);
    agreed_rc(o1.rc, &rc1);
    run(&cfg, seed_dir, NULL, 0.25, 0, &o1);
    agreed_rc(o1.rc, &rc2);
    run(&cfg, early, NULL, 0.125, 0, &o1);
    agreed_rc(o1.rc, &rc3);
    snap want;
    int have_ref = rank_ != 0 || read_snap(ref, &want) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &have_ref, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rc1 || rc2 || rc3 || !have_ref) {
        if (rank_ == 0) printf("Bail out! the runs the cases start from failed (rc %d %d %d; %s)\n", rc1, rc2, rc3, o1.err);
        gh_par_finalize();
        return 1;
    }
    char *before = rank_ == 0 ? fingerprint(root, d) : NULL;
    const int fds = open_descriptors();

    if (rank_ == 0) printf("1..%ld\n", cases);
    long failures = 0, tally[3] = { 0 }, refused = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 1; i <= cases; ++i) {
        fault f;
        memset(&f, 0, sizeof f);
        if (rank_ == 0) {
            remove_tree(d);
            if (copy_dir(seed_dir, d) != 0) { printf("Bail out! cannot copy %s to %s\n", seed_dir, d); MPI_Abort(MPI_COMM_WORLD, 1); }
        }
        f.rank = (int)below(2);
        f.read = uniform() >= 0.5;
        if (f.read) draw_read(d, seed_dir, early, &f);
        else draw_write(d, &f);
        tally[f.read ? K_READ : f.fsize_kib ? K_LIMIT : K_NAME]++;
        snprintf(current, sizeof current, "%ld - %s", i, f.what);
        settle();   /* the case made before either rank starts */

        char why[2048] = "", line[400];
        run(&cfg, d, "", f.read ? 0 : f.t_end, rank_ == f.rank ? f.fsize_kib : 0, &o1);
        int rc = 0, same = agreed_rc(o1.rc, &rc) == 0;
        int said = rank_ == 0 && has_sentence(o1.err);
        MPI_Bcast(&said, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!same) append(why, sizeof why, "the ranks returned different statuses (one %d)", rc);
        else if (rc < 0 || rc > 1) append(why, sizeof why, "status %d (a signal?)", rc);
        else if (f.read && rc != 1) append(why, sizeof why, "status %d: a damaged set must be refused with 1", rc);
        else if (rc && !said) append(why, sizeof why, "status %d without a \"gravhost:\" sentence", rc);
        refused += rc != 0;
        if (rank_ == 0) {
            char other[4400];
            snprintf(other, sizeof other, "%s/" CK, d, 1 - f.rank);
            if (f.read && !same_file(other, f.other, f.other_len)) append(why, sizeof why, "the other rank's file changed");
            /* the cause removed */
            if (f.blocker[0]) remove_tree(f.blocker);
            if (f.read) { remove_tree(f.path); fz_write_file(f.path, f.good, f.good_len); }
        }
        if (verbose && rank_ == 0) printf("# case %ld: %s: rc %d: %s\n", i, f.what, rc, last_line(o1.err, line, sizeof line));
        settle();

        /* the set the directory holds continues to t = 0.5, bit for bit */
        run(&cfg, d, "", 0, 0, &o2);
        int rc_after = 0;
        same = agreed_rc(o2.rc, &rc_after) == 0;
        if (rank_ == 0) {
            snap got;
            memset(&got, 0, sizeof got);
            if (!same || rc_after != 0)
                append(why, sizeof why, "the restart after it failed (status %d): %s", rc_after,
                       last_line(o2.err, line, sizeof line));
            else if (read_snap(d, &got) != 0 || !same_snap(&want, &got))
                append(why, sizeof why, "the restart does not end bit-identical to the uninterrupted run");
            gp_ic_free(&got.ic);
            char *now = fingerprint(root, d);
            if (strcmp(now, before) != 0) append(why, sizeof why, "something outside the case's folder changed:\n%.600s", now);
            free(now);
        }
        settle();
        int leaked = open_descriptors() > fds, any_leak = 0;
        MPI_Allreduce(&leaked, &any_leak, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (any_leak && rank_ == 0) append(why, sizeof why, "a rank holds more descriptors than before the first case");
        free(f.good);
        free(f.other);
        if (rank_ == 0) {
            failures += why[0] != '\0';
            printf("%sok %s%s%s\n", why[0] ? "not " : "", current, why[0] ? ": " : "", why);
            if (why[0]) {
                for (const char *p = o1.err; *p; ) {
                    const char *nl = strchr(p, '\n');
                    printf("#   %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
                    if (!nl) break;
                    p = nl + 1;
                }
            }
        }
    }
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rank_ == 0) {
        printf("# %ld cases (seed %llu) in %.0f s (%.3f s a case): %ld write size limits, %ld names taken, %ld reads; "
               "%ld failing runs refused or stopped with a sentence; %ld failed\n", cases, seed, took,
               took / (double)(cases > 0 ? cases : 1), tally[K_LIMIT], tally[K_NAME], tally[K_READ], refused, failures);
        gp_ic_free(&want.ic);
        free(before);
        remove_tree(root);
    }
    gh_config_free(&cfg);
    gh_par_finalize();
    return failures ? 1 : 0;
}
