/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravic — make initial conditions from the command line and write them as
 * an HDF5 snapshot (.h5/.hdf5) or a text file (anything else, the format
 * the `file` model reads).
 *
 *   gravic MODEL N OUT [seed=S] [OPTION=VALUE ...]
 *   gravic --list             the models, one line each
 *   gravic --describe MODEL   a model's options, defaults and docs
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ic.h"
#include "snapshot.h"

static int usage(FILE *to)
{
    fprintf(to, "usage: gravic MODEL N OUT [seed=S] [OPTION=VALUE ...]\n"
                "       gravic --list | --describe MODEL\n"
                "OUT ending in .h5 or .hdf5 is written as an HDF5 snapshot (Gadget/SWIFT layout),\n"
                "anything else as text (columns x y z vx vy vz m id).\n");
    return to == stderr ? 2 : 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

static const char *type_name(gp_ic_opt_type t)
{
    switch (t) {
    case GP_IC_OPT_DOUBLE: return "double";
    case GP_IC_OPT_INT: return "int";
    case GP_IC_OPT_BOOL: return "bool";
    case GP_IC_OPT_STRING: return "string";
    case GP_IC_OPT_ENUM: return "enum";
    }
    return "?";
}

int main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) return usage(stdout);
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (const char *const *m = gp_ic_models(); *m; ++m) printf("%-10s %s\n", *m, gp_ic_summary(*m));
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "--describe")) {
        size_t count;
        const gp_ic_opt_info *o = gp_ic_describe(argv[2], &count);
        if (!o) {
            fprintf(stderr, "gravic: unknown model '%s'; see gravic --list.\n", argv[2]);
            return 1;
        }
        printf("%s: %s\n", argv[2], gp_ic_summary(argv[2]));
        for (size_t i = 0; i < count; ++i)
            printf("  %-14s %-6s default %-10s %-12s %s\n", o[i].name, type_name(o[i].type),
                   o[i].default_value[0] ? o[i].default_value : "\"\"", o[i].allowed ? o[i].allowed : "",
                   o[i].doc);
        return 0;
    }
    if (argc < 4) return usage(stderr);
    char *end;
    unsigned long long n = strtoull(argv[2], &end, 10);
    if (*end || argv[2][0] == '-') {
        fprintf(stderr, "gravic: N must be a non-negative integer; got '%s'.\n", argv[2]);
        return 2;
    }
    uint64_t seed = 1;
    gp_param *kv = calloc((size_t)argc, sizeof *kv);
    size_t nkv = 0;
    if (!kv) return 1;
    for (int i = 4; i < argc; ++i) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "gravic: '%s' is not OPTION=VALUE.\n", argv[i]);
            free(kv);
            return 2;
        }
        *eq = '\0';
        if (!strcmp(argv[i], "seed")) {
            seed = strtoull(eq + 1, &end, 10);
            if (*end || eq[1] == '-' || !eq[1]) {
                fprintf(stderr, "gravic: seed must be a non-negative integer; got '%s'.\n", eq + 1);
                free(kv);
                return 2;
            }
            continue;
        }
        kv[nkv].name = argv[i];
        kv[nkv].value = eq + 1;
        ++nkv;
    }
    gp_ic_opts opts = {kv, nkv};
    gp_ic ic;
    char err[512];
    if (gp_ic_make(argv[1], (size_t)n, seed, &opts, &ic, err, sizeof err) != 0) {
        fprintf(stderr, "gravic: %s\n", err);
        free(kv);
        return 1;
    }
    free(kv);
    const char *out = argv[3];
    int rc = 0;
    if (ends_with(out, ".h5") || ends_with(out, ".hdf5")) {
        if (gp_snapshot_write(out, 0.0, ic.n, ic.pos, ic.vel, ic.mass, ic.id, err, sizeof err) != 0) {
            fprintf(stderr, "gravic: %s\n", err);
            rc = 1;
        }
    } else {
        FILE *fp = fopen(out, "w");
        if (!fp) {
            perror(out);
            rc = 1;
        } else {
            fprintf(fp, "# gravic %s n=%zu seed=%" PRIu64 "\n# x y z vx vy vz m id\n", argv[1], ic.n, seed);
            for (size_t i = 0; i < ic.n; ++i) {
                const double *x = &ic.pos[3 * i], *v = &ic.vel[3 * i];
                fprintf(fp, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g %" PRIu64 "\n", x[0], x[1], x[2],
                        v[0], v[1], v[2], ic.mass[i], ic.id[i]);
            }
            if (fclose(fp) != 0) {
                perror(out);
                rc = 1;
            }
        }
    }
    gp_ic_free(&ic);
    return rc;
}
