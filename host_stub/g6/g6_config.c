/* SPDX-License-Identifier: Apache-2.0 */
/* g6_config.c — the settings of g6_config.h: defaults, file, environment. */
#include "g6_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) ++s;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static int parse_int(const char *v, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *trim(end) != '\0' || x < lo || x > hi) return -1;
    *out = (int)x;
    return 0;
}

static int add_param(g6_config *c, const char *name, const char *value, char *err, size_t errlen)
{
    if (strlen(name) >= sizeof c->names[0] || strlen(value) >= sizeof c->values[0] || !*name) {
        snprintf(err, errlen, "plugin parameter '%s' has an empty or too long name or value", name);
        return -1;
    }
    size_t k = 0;
    while (k < c->n_params && strcmp(c->names[k], name) != 0) ++k;
    if (k == G6_MAX_PARAMS) {
        snprintf(err, errlen, "more than %d plugin parameters given", G6_MAX_PARAMS);
        return -1;
    }
    strcpy(c->names[k], name);
    strcpy(c->values[k], value);
    c->params[k].name = c->names[k];
    c->params[k].value = c->values[k];
    if (k == c->n_params) ++c->n_params;
    return 0;
}

/* One setting by key; where names the source for the sentence. */
static int apply(g6_config *c, const char *key, const char *value, const char *where,
                 char *err, size_t errlen)
{
    if (strncmp(key, "param.", 6) == 0) return add_param(c, key + 6, value, err, errlen);
    if (strcmp(key, "plugin") == 0) {
        if (!*value || strlen(value) >= sizeof c->plugin) {
            snprintf(err, errlen, "%s: plugin must be a short name or a path", where);
            return -1;
        }
        strcpy(c->plugin, value);
        return 0;
    }
    if (strcmp(key, "device") == 0) {
        if (parse_int(value, -1, 1 << 20, &c->device) == 0) return 0;
        snprintf(err, errlen, "%s: device '%s' is not a GPU ordinal (an integer >= -1)", where, value);
        return -1;
    }
    if (strcmp(key, "npipes") == 0) {
        if (parse_int(value, 1, 1 << 20, &c->npipes) == 0) return 0;
        snprintf(err, errlen, "%s: npipes '%s' is not an integer in [1, 1048576]", where, value);
        return -1;
    }
    if (strcmp(key, "nbmax") == 0) {
        if (parse_int(value, 1, 1 << 30, &c->nbmax) == 0) return 0;
        snprintf(err, errlen, "%s: nbmax '%s' is not a positive integer", where, value);
        return -1;
    }
    if (strcmp(key, "route") == 0) {
        if (strcmp(value, "auto") == 0) c->route = G6_ROUTE_AUTO;
        else if (strcmp(value, "field") == 0) c->route = G6_ROUTE_FIELD;
        else if (strcmp(value, "held") == 0) c->route = G6_ROUTE_HELD;
        else {
            snprintf(err, errlen, "%s: route '%s' is not one of auto, field, held", where, value);
            return -1;
        }
        return 0;
    }
    snprintf(err, errlen, "%s: unknown setting '%s' (known: plugin, device, npipes, nbmax, route, param.NAME)",
             where, key);
    return -1;
}

static int read_file(g6_config *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read GRAVPLUG_G6_CONFIG file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024], where[600];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        ++lineno;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *s = trim(line);
        if (!*s) continue;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s: expected 'key = value'", where);
            rc = -1;
            break;
        }
        *eq = '\0';
        rc = apply(c, trim(s), trim(eq + 1), where, err, errlen);
    }
    fclose(f);
    return rc;
}

/* "a=1,b=2" */
static int read_params(g6_config *c, const char *list, char *err, size_t errlen)
{
    char buf[4096];
    if (strlen(list) >= sizeof buf) {
        snprintf(err, errlen, "GRAVPLUG_G6_PARAMS is longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    strcpy(buf, list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            snprintf(err, errlen, "GRAVPLUG_G6_PARAMS: '%s' is not name=value", trim(tok));
            return -1;
        }
        *eq = '\0';
        if (add_param(c, trim(tok), trim(eq + 1), err, errlen)) return -1;
    }
    return 0;
}

int g6_config_read(g6_config *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    strcpy(c->plugin, "cpu-direct");
    c->device = -1;
    c->npipes = 256;
    c->nbmax = 256;
    c->route = G6_ROUTE_AUTO;

    const char *file = getenv("GRAVPLUG_G6_CONFIG");
    if (file && *file && read_file(c, file, err, errlen)) return -1;

    static const struct { const char *env, *key; } vars[] = {
        {"GRAVPLUG_G6_PLUGIN", "plugin"}, {"GRAVPLUG_G6_DEVICE", "device"},
        {"GRAVPLUG_G6_NPIPES", "npipes"}, {"GRAVPLUG_G6_NBMAX", "nbmax"},
        {"GRAVPLUG_G6_ROUTE", "route"},
    };
    for (size_t k = 0; k < sizeof vars / sizeof vars[0]; ++k) {
        const char *v = getenv(vars[k].env);
        if (v && *v && apply(c, vars[k].key, v, vars[k].env, err, errlen)) return -1;
    }
    const char *params = getenv("GRAVPLUG_G6_PARAMS");
    if (params && *params && read_params(c, params, err, errlen)) return -1;
    return 0;
}
