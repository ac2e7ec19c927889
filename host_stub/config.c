/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c — reads a gravhost config with libconfig and checks every
 * setting: known names only, right types, sensible ranges. Messages are
 * "FILE:LINE: SETTING.PATH: what is wrong (what to do)".
 */
#include "config.h"

#include <libconfig.h>
#include <libgen.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "file_checks.h"
#include "numfmt.h"

typedef struct reader {
    const char *file;
    char *err;
    size_t errlen;
    char *text;            /* the whole file, to re-read integer literals */
} reader;

static int fail(reader *r, const config_setting_t *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "solver.params.eps", "switch[0].plugin": a list's elements by index */
static void setting_path(const config_setting_t *s, char *buf, size_t len)
{
    const config_setting_t *p = s ? config_setting_parent(s) : NULL;
    if (!p) { snprintf(buf, len, "(top level)"); return; }
    char parent[256] = "";
    if (config_setting_parent(p)) setting_path(p, parent, sizeof parent);
    if (!config_setting_name(s)) snprintf(buf, len, "%s[%d]", parent, config_setting_index(s));
    else if (parent[0]) snprintf(buf, len, "%s.%s", parent, config_setting_name(s));
    else snprintf(buf, len, "%s", config_setting_name(s));
}

static int fail(reader *r, const config_setting_t *s, const char *fmt, ...)
{
    char path[300], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (s) {
        setting_path(s, path, sizeof path);
        snprintf(r->err, r->errlen, "%s:%d: %s: %s", r->file, config_setting_source_line(s), path, msg);
    } else {
        snprintf(r->err, r->errlen, "%s: %s", r->file, msg);
    }
    return -1;
}

/* libconfig 1.5 reads an integer literal without the L suffix into 32 bits
 * and wraps it silently (n = 4294967396 becomes 100). Read the literal again
 * from the file's text: "NAME = digits" on the setting's line. Returns 0
 * with the full 64-bit value in *out, or -1 (with the message) when the
 * literal does not fit even 64 bits. */
static int int_value(reader *r, const config_setting_t *s, long long *out)
{
    *out = config_setting_type(s) == CONFIG_TYPE_INT64 ? config_setting_get_int64(s) : config_setting_get_int(s);
    const char *name = config_setting_name(s);
    int line = config_setting_source_line(s);
    if (config_setting_type(s) != CONFIG_TYPE_INT || !name || !r->text || line < 1) return 0;
    const char *p = r->text;
    for (int l = 1; l < line && p; ++l) {
        p = strchr(p, '\n');
        if (p) ++p;
    }
    if (!p) return 0;
    const char *eol = strchr(p, '\n');
    size_t nlen = strlen(name);
    for (const char *q = p; (q = strstr(q, name)) && (!eol || q < eol); q += nlen) {
        char before = q == r->text ? ' ' : q[-1];
        if (before == '_' || before == '-' || before == '*' || (before >= '0' && before <= '9')
            || (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z'))
            continue;
        const char *v = q + nlen;
        while (*v == ' ' || *v == '\t') ++v;
        if (*v != '=' && *v != ':') continue;
        ++v;
        while (*v == ' ' || *v == '\t') ++v;
        char *end;
        errno = 0;
        int hex = (v[0] == '-' || v[0] == '+') ? (v[1] == '0' && (v[2] == 'x' || v[2] == 'X'))
                                                : (v[0] == '0' && (v[1] == 'x' || v[1] == 'X'));
        long long full = strtoll(v, &end, hex ? 16 : 10);
        if (end == v) return 0;
        /* the literal of this setting wraps to what libconfig holds: the
         * same low 32 bits (an "n = 5" inside a string earlier on the line
         * does not) */
        if ((int32_t)(uint32_t)(unsigned long long)full != (int32_t)config_setting_get_int(s)) continue;
        if (errno == ERANGE)
            return fail(r, s, "the integer %.*s does not fit in 64 bits", (int)(end - v), v);
        *out = full;
        return 0;
    }
    return 0;
}

/* Every child of group g must be named in allowed (NULL-terminated). */
static int check_names(reader *r, const config_setting_t *g, const char *const *allowed)
{
    for (int i = 0; i < config_setting_length(g); ++i) {
        const config_setting_t *c = config_setting_get_elem(g, (unsigned)i);
        const char *name = config_setting_name(c);
        int known = 0;
        for (int k = 0; allowed[k]; ++k)
            if (strcmp(allowed[k], name) == 0) known = 1;
        if (!known) {
            char list[300] = "";
            for (int k = 0; allowed[k]; ++k) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", allowed[k]);
            }
            return fail(r, c, "unknown setting (this group accepts %s)", list);
        }
    }
    return 0;
}

static int get_group(reader *r, const config_setting_t *parent, const char *name,
                     int required, const config_setting_t **out)
{
    const config_setting_t *s = config_setting_get_member(parent, name);
    *out = s;
    if (!s) {
        if (required) {
            char path[300];
            setting_path(parent, path, sizeof path);
            if (config_setting_name(parent))
                return fail(r, parent, "the group needs a setting \"%s\"", name);
            return fail(r, NULL, "missing the required group \"%s = { ... };\"", name);
        }
        return 0;
    }
    if (config_setting_type(s) != CONFIG_TYPE_GROUP)
        return fail(r, s, "expected a group { ... }");
    return 0;
}

static int get_number(reader *r, const config_setting_t *g, const char *name,
                      int required, double def, double *out)
{
    const config_setting_t *s = g ? config_setting_get_member(g, name) : NULL;
    *out = def;
    if (!s) return required ? fail(r, g, "missing the number \"%s\"", name) : 0;
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: {
        long long v;
        if (int_value(r, s, &v) != 0) return -1;
        *out = (double)v;
        break;
    }
    case CONFIG_TYPE_FLOAT: *out = config_setting_get_float(s); break;
    default: return fail(r, s, "expected a number");
    }
    if (!isfinite(*out)) return fail(r, s, "expected a finite number");
    return 0;
}

static int get_uint(reader *r, const config_setting_t *g, const char *name,
                    int required, uint64_t def, uint64_t *out)
{
    const config_setting_t *s = g ? config_setting_get_member(g, name) : NULL;
    *out = def;
    if (!s) return required ? fail(r, g, "missing the integer \"%s\"", name) : 0;
    long long v;
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: if (int_value(r, s, &v) != 0) return -1; break;
    default: return fail(r, s, "expected a whole number (no decimal point)");
    }
    if (v < 0) return fail(r, s, "expected a number >= 0, got %lld", v);
    *out = (uint64_t)v;
    return 0;
}

static int get_string(reader *r, const config_setting_t *g, const char *name,
                      int required, const char *def, char **out)
{
    const config_setting_t *s = g ? config_setting_get_member(g, name) : NULL;
    const char *v = def;
    if (!s) {
        if (required) return fail(r, g, "missing the string \"%s\"", name);
    } else {
        if (config_setting_type(s) != CONFIG_TYPE_STRING)
            return fail(r, s, "expected a string in double quotes");
        v = config_setting_get_string(s);
    }
    *out = v ? strdup(v) : NULL;
    if (v && !*out) return fail(r, s ? s : g, "out of memory copying the string \"%s\"", name);
    return 0;
}

static int setting_line(const config_setting_t *g, const char *name)
{
    const config_setting_t *s = g ? config_setting_get_member(g, name) : NULL;
    return s ? config_setting_source_line(s) : (g ? config_setting_source_line(g) : 0);
}

/* A group of pass-through name = value settings, converted to strings. */
static int get_params(reader *r, const config_setting_t *parent, const char *name, gh_params *out)
{
    memset(out, 0, sizeof *out);
    const config_setting_t *g;
    if (get_group(r, parent, name, 0, &g) != 0) return -1;
    if (!g) return 0;
    out->line = config_setting_source_line(g);
    int n = config_setting_length(g);
    out->items = calloc((size_t)n + 1, sizeof *out->items);
    out->lines = calloc((size_t)n + 1, sizeof *out->lines);
    if (!out->items || !out->lines) return fail(r, g, "out of memory");
    for (int i = 0; i < n; ++i) {
        const config_setting_t *c = config_setting_get_elem(g, (unsigned)i);
        char buf[64];
        const char *v = buf;
        long long iv;
        switch (config_setting_type(c)) {
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
            if (int_value(r, c, &iv) != 0) return -1;
            snprintf(buf, sizeof buf, "%lld", iv);
            break;
        case CONFIG_TYPE_FLOAT: gh_fmt_double(buf, sizeof buf, config_setting_get_float(c)); break;
        case CONFIG_TYPE_BOOL: v = config_setting_get_bool(c) ? "true" : "false"; break;
        case CONFIG_TYPE_STRING: v = config_setting_get_string(c); break;
        default: return fail(r, c, "expected a number, a boolean or a string");
        }
        out->items[out->n].name = strdup(config_setting_name(c));
        out->items[out->n].value = strdup(v);
        out->lines[out->n] = config_setting_source_line(c);
        out->n++;   /* counted before the check, so that free_params frees both */
        if (!out->items[out->n - 1].name || !out->items[out->n - 1].value)
            return fail(r, c, "out of memory copying the setting");
    }
    return 0;
}

static void free_params(gh_params *p)
{
    for (size_t i = 0; i < p->n; ++i) {
        free((char *)p->items[i].name);
        free((char *)p->items[i].value);
    }
    free(p->items);
    free(p->lines);
    memset(p, 0, sizeof *p);
}

const char *gh_params_get(const gh_params *p, const char *name)
{
    const char *v = NULL;
    for (size_t i = 0; i < p->n; ++i)
        if (strcmp(p->items[i].name, name) == 0) v = p->items[i].value;
    return v;
}

/* name without a leading "./" (the same file either way) */
static const char *plain(const char *name)
{
    while (name[0] == '.' && name[1] == '/') name += 2;
    return name;
}

/* name is what write_snapshot makes of prefix: PREFIX_NNNN.h5 */
static int is_snapshot_name(const char *name, const char *prefix)
{
    size_t lp = strlen(prefix), ln = strlen(name);
    if (ln < lp + 8 || strncmp(name, prefix, lp) != 0 || name[lp] != '_' || strcmp(name + ln - 3, ".h5") != 0)
        return 0;
    for (size_t i = lp + 1; i < ln - 3; ++i)
        if (name[i] < '0' || name[i] > '9') return 0;
    return 1;
}

/* Each output names a file of its own: a checkpoint called like the log or
 * a snapshot would overwrite it (or be overwritten), "", "." or a name
 * ending in "/" is a directory, and paths must fit the buffers they are
 * built in (never cut short, which would write somewhere else). */
static int check_output_names(reader *r, const config_setting_t *g, const gh_config *cfg)
{
    static const char *const keys[] = { "log", "checkpoint" };
    static const char *const defaults[] = { "diagnostics.tsv", "checkpoint.gpck" };
    const char *names[] = { plain(cfg->log_name), plain(cfg->ckpt_name) };
    const char *prefix = plain(cfg->snap_prefix);
    const config_setting_t *dir = g ? config_setting_get_member(g, "dir") : NULL;
    if (!cfg->out_dir[0]) return fail(r, dir ? dir : g, "is empty: give a directory, such as \"out\" (\".\" for this one)");
    if (strlen(cfg->out_dir) > GH_MAX_DIR)
        return fail(r, dir ? dir : g, "is %zu characters long; at most %d", strlen(cfg->out_dir), GH_MAX_DIR);
    for (int k = 0; k < 2; ++k) {
        const config_setting_t *s = g ? config_setting_get_member(g, keys[k]) : NULL;
        const char *base = strrchr(names[k], '/') ? strrchr(names[k], '/') + 1 : names[k];
        if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
            return fail(r, s ? s : g, "\"%s\" names a directory, not a file: give a file name such as \"%s\"",
                        names[k], defaults[k]);
        if (is_snapshot_name(names[k], prefix))
            return fail(r, s ? s : g, "\"%s\" is the name of a snapshot (%s_NNNN.h5), which would overwrite it: "
                        "choose another name", names[k], prefix);
        if (strlen(names[k]) > GH_MAX_NAME)
            return fail(r, s ? s : g, "is %zu characters long; at most %d", strlen(names[k]), GH_MAX_NAME);
    }
    if (strlen(prefix) > GH_MAX_NAME) {
        const config_setting_t *s = g ? config_setting_get_member(g, "snapshot_prefix") : NULL;
        return fail(r, s ? s : g, "is %zu characters long; at most %d", strlen(prefix), GH_MAX_NAME);
    }
    if (strcmp(names[0], names[1]) == 0) {
        const config_setting_t *s = g ? config_setting_get_member(g, "checkpoint") : NULL;
        return fail(r, s ? s : g, "\"%s\" is also output.log: give the checkpoint and the log names of their own",
                    names[1]);
    }
    return 0;
}

/* "1e10 Msun", "kpc", "3.0857e21 cm": a number (default 1) and a unit
 * name; the value in cgs, or 0 when the text is none of these. */
static double quantity_cgs(const char *text, int dim)
{
    static const struct { const char *name; int dim; double cgs; } names[] = {
        {"cm", 0, 1.0}, {"m", 0, 1e2}, {"km", 0, 1e5}, {"au", 0, 1.495978707e13}, {"AU", 0, 1.495978707e13},
        {"pc", 0, 3.0856775814913673e18}, {"kpc", 0, 3.0856775814913673e21}, {"Mpc", 0, 3.0856775814913673e24},
        {"g", 1, 1.0}, {"kg", 1, 1e3}, {"Msun", 1, 1.98841e33}, {"MSun", 1, 1.98841e33}, {"Msol", 1, 1.98841e33},
        {"s", 2, 1.0}, {"yr", 2, 3.15576e7}, {"kyr", 2, 3.15576e10}, {"Myr", 2, 3.15576e13}, {"Gyr", 2, 3.15576e16},
    };
    char *end;
    double v = strtod(text, &end);
    if (end == text) v = 1.0;
    while (*end == ' ') end++;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k)
        if (names[k].dim == dim && strcmp(end, names[k].name) == 0)
            return isfinite(v) && v > 0 ? v * names[k].cgs : 0.0;
    return 0.0;
}

/* units = { length = "1 kpc"; mass = "1e10 Msun"; }: two of the three;
 * the third follows from G = 1, the solvers' G (docs/CONFIG.md). */
static int read_units(reader *r, const config_setting_t *root, gh_config *cfg)
{
    const config_setting_t *g = config_setting_get_member(root, "units");
    if (!g) return 0;
    static const char *const names[] = { "length", "mass", "time", NULL };
    static const char *const examples[] = { "\"1 kpc\" (cm, m, km, au, pc, kpc, Mpc)",
                                            "\"1e10 Msun\" (g, kg, Msun)", "\"1 Myr\" (s, yr, kyr, Myr, Gyr)" };
    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
        return fail(r, g, "expected a group: units = { length = \"1 kpc\"; mass = \"1e10 Msun\"; };");
    if (check_names(r, g, names) != 0) return -1;
    double v[3] = { 0, 0, 0 };
    int given = 0;
    for (int k = 0; k < 3; ++k) {
        char *text = NULL;
        if (get_string(r, g, names[k], 0, NULL, &text) != 0) return -1;
        if (!text) continue;
        v[k] = quantity_cgs(text, k);
        free(text);
        if (!(v[k] > 0)) return fail(r, config_setting_get_member(g, names[k]), "expected a quantity such as %s", examples[k]);
        given++;
    }
    if (given != 2)
        return fail(r, g, "give two of length, mass and time (%d given): the third follows from G = 1, the "
                    "gravitational constant the solvers use", given);
    const double G_cgs = 6.67430e-8;   /* CODATA 2018, as the snapshot writer */
    cfg->unit_length_cgs = v[0] > 0 ? v[0] : cbrt(G_cgs * v[1] * v[2] * v[2]);
    cfg->unit_mass_cgs = v[1] > 0 ? v[1] : v[0] * v[0] * v[0] / (G_cgs * v[2] * v[2]);
    return 0;
}

static int read_switches(reader *r, const config_setting_t *root, gh_config *cfg)
{
    const config_setting_t *list = config_setting_get_member(root, "switch");
    if (!list) return 0;
    if (config_setting_type(list) != CONFIG_TYPE_LIST)
        return fail(r, list, "expected a list of groups: switch = ( { at_time = 5.0; plugin = \"cpu-direct\"; } );");
    int n = config_setting_length(list);
    if (n > GH_MAX_SWITCHES) return fail(r, list, "at most %d switches", GH_MAX_SWITCHES);
    static const char *const names[] = { "at_time", "below_active_fraction", "plugin", "params", NULL };
    for (int i = 0; i < n; ++i) {
        const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
        /* counted at once, so gh_config_free frees what a failing entry
         * has already allocated */
        gh_switch *sw = &cfg->switches[cfg->n_switches++];
        if (config_setting_type(g) != CONFIG_TYPE_GROUP)
            return fail(r, list, "element %d is not a group { ... }", i);
        if (check_names(r, g, names) != 0) return -1;
        int has_t = config_setting_get_member(g, "at_time") != NULL;
        int has_f = config_setting_get_member(g, "below_active_fraction") != NULL;
        if (has_t == has_f)
            return fail(r, list, "element %d (line %d) needs exactly one of at_time and below_active_fraction",
                        i, config_setting_source_line(g));
        sw->by_time = has_t;
        sw->line = config_setting_source_line(g);
        if (has_t && get_number(r, g, "at_time", 1, 0, &sw->at_time) != 0) return -1;
        if (has_f) {
            if (get_number(r, g, "below_active_fraction", 1, 0, &sw->below_fraction) != 0) return -1;
            if (!(sw->below_fraction > 0 && sw->below_fraction <= 1))
                return fail(r, config_setting_get_member(g, "below_active_fraction"), "must lie in (0, 1]");
        }
        if (get_string(r, g, "plugin", 1, NULL, &sw->plugin) != 0) return -1;
        sw->has_params = config_setting_get_member(g, "params") != NULL;
        if (get_params(r, g, "params", &sw->params) != 0) return -1;
    }
    return 0;
}

/* What fp holds, read to its end into *text (malloc'd); closes fp. */
static int read_stream(FILE *fp, const char *path, char **text, char *err, size_t errlen)
{
    *text = NULL;
    size_t cap = 0;
    ssize_t got = getdelim(text, &cap, '\0', fp);
    int bad = ferror(fp);
    fclose(fp);
    if (got < 0 && !bad) {   /* an empty file */
        free(*text);
        *text = strdup("");
    }
    if (bad || !*text) {
        free(*text);
        *text = NULL;
        snprintf(err, errlen, "%s: cannot read the file (does it exist?)", path);
        return -1;
    }
    return 0;
}

int gh_config_read_text(const char *path, char **text, char *err, size_t errlen)
{
    *text = NULL;
    char why[128];
    FILE *fp = gp_file_open_regular(path, "r", why, sizeof why);
    if (!fp) {
        snprintf(err, errlen, "%s: cannot read the file: %s", path, why);
        return -1;
    }
    return read_stream(fp, path, text, err, errlen);
}

int gh_config_load(const char *path, gh_config *cfg, char *err, size_t errlen)
{
    char *text;
    if (gh_config_read_text(path, &text, err, errlen) != 0) {
        memset(cfg, 0, sizeof *cfg);
        return -1;
    }
    int rc = gh_config_parse(path, text, cfg, err, errlen);
    free(text);
    return rc;
}

/* libconfig opens the files @include names itself, by name (fopen: a
 * FIFO would block it for ever, and a file swapped in after any check
 * gravhost made would be read), before 1.7 from the include directory even
 * when the name is absolute, and says "cannot open include file" without
 * naming it. So gravhost reads each include itself, nested ones too (at
 * most MAX_INCLUDE_DEPTH deep): opened once, as a regular file (or a
 * sentence naming it), its text, includes rewritten alike, copied into an
 * anonymous memory file, and the @include line rewritten to name that copy
 * by its descriptor. libconfig, given /proc/self/fd as its include
 * directory, then parses the very bytes gravhost checked, and opens
 * nothing else. An @include inside a comment is read as well (libconfig
 * skips it). */
enum { MAX_INCLUDES = 64, MAX_INCLUDE_DEPTH = 10 };
typedef struct includes { int fd[MAX_INCLUDES]; size_t n; } includes;

static void close_includes(includes *inc)
{
    for (size_t i = 0; i < inc->n; ++i) close(inc->fd[i]);
    inc->n = 0;
}

/* text into a new memory file: its descriptor, or -1 with errno. */
static int memory_file(const char *text)
{
    int fd = memfd_create("gravhost-include", MFD_CLOEXEC);
    if (fd < 0) return -1;
    for (size_t left = strlen(text); left; ) {
        ssize_t k = write(fd, text, left);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { int e = errno; close(fd); errno = e; return -1; }
        text += k;
        left -= (size_t)k;
    }
    return fd;
}

/* A copy of text (path's) with every @include's name replaced by the
 * descriptor of a memory file holding that include's text, rewritten
 * alike (malloc'd; NULL with a sentence in err). dir: the top config's
 * folder, which relative names are read from (as libconfig has them). */
static char *read_includes(const char *path, const char *dir, const char *text, int depth, includes *inc,
                           char *err, size_t errlen)
{
    size_t cap = strlen(text) + 1, len = 0;
    char *out = malloc(cap);
    if (!out) { snprintf(err, errlen, "%s: out of memory reading its includes", path); return NULL; }
    for (const char *line = text; *line; ) {
        const char *next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        const char *p = line + strspn(line, " \t"), *close = NULL;
        if (strncmp(p, "@include", 8) == 0) {
            p += 8;
            p += strspn(p, " \t");
            close = *p == '"' ? strchr(p + 1, '"') : NULL;
            if (close && close >= next) close = NULL;   /* libconfig's syntax error says it */
        }
        char number[16] = "";
        if (close) {
            char name[1024], full[4096], why[128];
            snprintf(name, sizeof name, "%.*s", (int)(close - p - 1), p + 1);
            if (name[0] == '/') snprintf(full, sizeof full, "%s", name);
            else snprintf(full, sizeof full, "%s/%s", dir, name);
            FILE *fp = gp_file_open_regular(full, "r", why, sizeof why);
            char *inner = NULL, *rewritten = NULL;
            int fd = -1;
            if (!fp) {
                snprintf(err, errlen, "%s: @include \"%s\": cannot read %s: %s", path, name, full, why);
            } else if (depth >= MAX_INCLUDE_DEPTH) {
                fclose(fp);
                snprintf(err, errlen, "%s: @include \"%s\": includes are nested more than %d deep", path, name,
                         (int)MAX_INCLUDE_DEPTH);
            } else if (inc->n == MAX_INCLUDES) {
                fclose(fp);
                snprintf(err, errlen, "%s: @include \"%s\": the config includes more than %d files; merge some",
                         path, name, (int)MAX_INCLUDES);
            } else if (read_stream(fp, full, &inner, err, errlen) == 0
                       && (rewritten = read_includes(full, dir, inner, depth + 1, inc, err, errlen)) != NULL) {
                fd = memory_file(rewritten);
                if (fd < 0)
                    snprintf(err, errlen, "%s: @include \"%s\": cannot copy %s for libconfig: %s", path, name, full,
                             strerror(errno));
            }
            free(inner);
            free(rewritten);
            if (fd < 0) { free(out); return NULL; }
            inc->fd[inc->n++] = fd;
            snprintf(number, sizeof number, "%d", fd);
        }
        /* the line, its include's name (between p and close) replaced by the number */
        size_t head = close ? (size_t)(p + 1 - line) : (size_t)(next - line);
        size_t tail = close ? (size_t)(next - close) : 0;
        if (len + head + strlen(number) + tail + 1 > cap) {
            cap = 2 * (len + head + strlen(number) + tail + 1);
            char *grown = realloc(out, cap);
            if (!grown) { free(out); snprintf(err, errlen, "%s: out of memory reading its includes", path); return NULL; }
            out = grown;
        }
        memcpy(out + len, line, head);
        len += head;
        memcpy(out + len, number, strlen(number));
        len += strlen(number);
        if (close) memcpy(out + len, close, tail);
        len += tail;
        line = next;
    }
    out[len] = '\0';
    return out;
}

int gh_config_parse(const char *path, const char *text, gh_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    reader rd = { path, err, errlen, NULL }, *r = &rd;
    config_t lc;
    config_init(&lc);
    /* @include paths are relative to the config file, as config_read_file has them */
    char *incdir = strdup(path);
    if (!incdir) {
        snprintf(err, errlen, "%s: out of memory", path);
        config_destroy(&lc);
        return -1;
    }
    includes inc = { .n = 0 };
    char *with_copies = read_includes(path, dirname(incdir), text, 1, &inc, err, errlen);
    free(incdir);
    if (!with_copies) {
        close_includes(&inc);
        config_destroy(&lc);
        return -1;
    }
    config_set_include_dir(&lc, "/proc/self/fd");   /* where the copies are */
    int parsed = config_read_string(&lc, with_copies) == CONFIG_TRUE;
    free(with_copies);
    close_includes(&inc);
    if (!parsed) {
        if (config_error_type(&lc) == CONFIG_ERR_FILE_IO)
            snprintf(err, errlen, "%s: cannot read a file it includes: %s (gravhost hands libconfig its includes "
                     "through /proc/self/fd, which needs Linux's /proc)", path, config_error_text(&lc));
        else
            snprintf(err, errlen, "%s:%d: syntax error: %s", path, config_error_line(&lc), config_error_text(&lc));
        config_destroy(&lc);
        return -1;
    }
    const config_setting_t *root = config_root_setting(&lc), *g;
    static const char *const top[] = { "solver", "initial_conditions", "integrator", "run", "output", "switch", "units",
                                       NULL };
    static const char *const solver_names[] = { "plugin", "params", "path", NULL };
    static const char *const ic_names[] = { "model", "n", "seed", "options", NULL };
    static const char *const integ_names[] = { "name", "params", NULL };
    static const char *const run_names[] = { "t_end", "progress", "signal_grace", NULL };
    static const char *const out_names[] = { "dir", "log", "log_interval", "snapshot_interval", "snapshot_prefix",
                                              "snapshot_files",
                                              "checkpoint", "checkpoint_interval", "lagrangian_fractions", NULL };
    int rc = -1;
    rd.text = strdup(text);   /* for setting_line's look at the source */
    cfg->path = strdup(path);
    char *tmp = strdup(path);
    cfg->dir = tmp ? strdup(dirname(tmp)) : NULL;
    free(tmp);
    if (!rd.text || !cfg->path || !cfg->dir) {
        fail(r, NULL, "out of memory reading the config");
        goto done;
    }
    if (check_names(r, root, top) != 0) goto done;

    if (get_group(r, root, "solver", 1, &g) != 0 || check_names(r, g, solver_names) != 0
        || get_string(r, g, "plugin", 0, "auto", &cfg->plugin) != 0
        || get_params(r, g, "params", &cfg->solver_params) != 0
        || get_string(r, g, "path", 0, "auto", &cfg->solver_path) != 0)
        goto done;
    cfg->plugin_line = setting_line(g, "plugin");
    cfg->solver_path_line = setting_line(g, "path");
    if (strcmp(cfg->solver_path, "auto") != 0 && strcmp(cfg->solver_path, "1.0") != 0
        && strcmp(cfg->solver_path, "1.1") != 0) {
        fail(r, config_setting_get_member(g, "path"),
             "expected \"auto\" (ABI 1.1 when the plugin offers it), \"1.0\" or \"1.1\"");
        goto done;
    }

    if (get_group(r, root, "initial_conditions", 0, &g) != 0) goto done;
    if (g) {
        cfg->have_ic = 1;
        cfg->ic_line = config_setting_source_line(g);
        if (check_names(r, g, ic_names) != 0 || get_string(r, g, "model", 1, NULL, &cfg->model) != 0
            || get_uint(r, g, "n", 1, 0, &cfg->n) != 0 || get_uint(r, g, "seed", 0, 1, &cfg->seed) != 0
            || get_params(r, g, "options", &cfg->ic_options) != 0)
            goto done;
        if (cfg->n > GH_MAX_PARTICLES) {
            fail(r, config_setting_get_member(g, "n"),
                 "%llu particles is more than gravplug can hold (at most %llu: particle indices are 32-bit)",
                 (unsigned long long)cfg->n, (unsigned long long)GH_MAX_PARTICLES);
            goto done;
        }
    }

    if (get_group(r, root, "integrator", 0, &g) != 0) goto done;
    if ((g && check_names(r, g, integ_names) != 0)
        || get_string(r, g, "name", 0, "block-rk2", &cfg->integrator) != 0
        || (g && get_params(r, g, "params", &cfg->integ_params) != 0))
        goto done;
    cfg->integrator_line = setting_line(g, "name");

    char *progress = NULL;
    if (get_group(r, root, "run", 1, &g) != 0 || check_names(r, g, run_names) != 0
        || get_number(r, g, "t_end", 1, 0, &cfg->t_end) != 0
        || get_string(r, g, "progress", 0, "auto", &progress) != 0
        || get_number(r, g, "signal_grace", 0, GH_SIGNAL_GRACE, &cfg->signal_grace) != 0) {
        free(progress);
        goto done;
    }
    if (!(cfg->signal_grace >= 0 && cfg->signal_grace <= 1e6)) {
        free(progress);
        fail(r, config_setting_get_member(g, "signal_grace"), "must be 0 to 1e6 seconds");
        goto done;
    }
    if (!(cfg->t_end >= 0)) {
        free(progress);
        fail(r, config_setting_get_member(g, "t_end"), "must be >= 0");
        goto done;
    }
    if (strcmp(progress, "auto") == 0) cfg->progress = 0;
    else if (strcmp(progress, "always") == 0) cfg->progress = 1;
    else if (strcmp(progress, "never") == 0) cfg->progress = 2;
    else {
        free(progress);
        fail(r, config_setting_get_member(g, "progress"), "expected \"auto\", \"always\" or \"never\"");
        goto done;
    }
    free(progress);

    if (get_group(r, root, "output", 0, &g) != 0) goto done;
    if ((g && check_names(r, g, out_names) != 0)
        || get_string(r, g, "dir", 0, "out", &cfg->out_dir) != 0
        || get_string(r, g, "log", 0, "diagnostics.tsv", &cfg->log_name) != 0
        || get_string(r, g, "snapshot_prefix", 0, "snap", &cfg->snap_prefix) != 0
        || get_string(r, g, "checkpoint", 0, "checkpoint.gpck", &cfg->ckpt_name) != 0
        || get_number(r, g, "log_interval", 0, cfg->t_end / 100, &cfg->log_interval) != 0
        || get_number(r, g, "snapshot_interval", 0, cfg->t_end / 4, &cfg->snap_interval) != 0
        || get_number(r, g, "checkpoint_interval", 0, 0, &cfg->ckpt_interval) != 0)
        goto done;
    if (check_output_names(r, g, cfg) != 0) goto done;
    char *files = NULL;
    if (get_string(r, g, "snapshot_files", 0, "one", &files) != 0) goto done;
    if (strcmp(files, "one") != 0 && strcmp(files, "per-rank") != 0) {
        free(files);
        fail(r, config_setting_get_member(g, "snapshot_files"),
             "expected \"one\" (every rank's particles gathered on rank 0, one file) or \"per-rank\" "
             "(each rank writes its own part, rank 0 a master file that joins them)");
        goto done;
    }
    cfg->snap_per_rank = strcmp(files, "per-rank") == 0;
    free(files);
    static const char *const interval_names[] = { "log_interval", "snapshot_interval", "checkpoint_interval" };
    double *intervals[] = { &cfg->log_interval, &cfg->snap_interval, &cfg->ckpt_interval };
    int *lines[] = { &cfg->log_interval_line, &cfg->snap_interval_line, &cfg->ckpt_interval_line };
    for (int k = 0; k < 3; ++k) {
        const config_setting_t *s = g ? config_setting_get_member(g, interval_names[k]) : NULL;
        *lines[k] = s ? config_setting_source_line(s) : 0;
    }
    for (int k = 0; k < 3; ++k)
        if (*intervals[k] < 0) {
            fail(r, config_setting_get_member(g, interval_names[k]), "must be >= 0 (0: none)");
            goto done;
        }
    const config_setting_t *fr = g ? config_setting_get_member(g, "lagrangian_fractions") : NULL;
    if (fr) {
        int t = config_setting_type(fr);
        if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST) { fail(r, fr, "expected an array like [0.1, 0.5, 0.9]"); goto done; }
        int n = config_setting_length(fr);
        if (n < 1 || n > GH_MAX_FRACTIONS) { fail(r, fr, "give 1 to %d fractions", GH_MAX_FRACTIONS); goto done; }
        for (int i = 0; i < n; ++i) {
            const config_setting_t *e = config_setting_get_elem(fr, (unsigned)i);
            int et = config_setting_type(e);
            double v = et == CONFIG_TYPE_FLOAT ? config_setting_get_float(e)
                     : et == CONFIG_TYPE_INT ? config_setting_get_int(e) : -1;
            if (!(v > 0 && v < 1)) { fail(r, fr, "element %d must be a fraction in (0, 1)", i); goto done; }
            cfg->fractions[cfg->n_fractions++] = v;
        }
    } else {
        static const double def[] = { 0.1, 0.25, 0.5, 0.75, 0.9 };
        memcpy(cfg->fractions, def, sizeof def);
        cfg->n_fractions = 5;
    }

    if (read_switches(r, root, cfg) != 0 || read_units(r, root, cfg) != 0) goto done;
    rc = 0;
done:
    free(rd.text);
    config_destroy(&lc);
    if (rc != 0) gh_config_free(cfg);
    return rc;
}

void gh_config_free(gh_config *cfg)
{
    free(cfg->path); free(cfg->dir); free(cfg->plugin); free(cfg->model); free(cfg->integrator);
    free(cfg->solver_path);
    free(cfg->out_dir); free(cfg->log_name); free(cfg->snap_prefix); free(cfg->ckpt_name);
    free_params(&cfg->solver_params);
    free_params(&cfg->ic_options);
    free_params(&cfg->integ_params);
    for (size_t i = 0; i < cfg->n_switches; ++i) {
        free(cfg->switches[i].plugin);
        free_params(&cfg->switches[i].params);
    }
    memset(cfg, 0, sizeof *cfg);
}
