/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin-by-name.h — what the tests that load a plugin of this build by
 * its name or path share (tree-accuracy, tree-jerk, extreme-scales): the
 * plugin found through GP_BUILD (default: build) as
 * $GP_BUILD/plugins/gravplug-NAME.so, closed at exit, and parameters given
 * as one "name=value name=value ..." string.
 */
#ifndef GP_TESTS_PLUGIN_BY_NAME_H
#define GP_TESTS_PLUGIN_BY_NAME_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "tap.h"
#include "testlib.h"

/* The plugins opened here, closed at exit (so that a leak checker sees
 * only what the code under test leaves behind). */
static gp_plugin *tl_opened_[16];
static int tl_nopened_;
static void tl_close_opened(void)
{
    while (tl_nopened_ > 0) gp_plugin_close(tl_opened_[--tl_nopened_]);
}

/* The table of the plugin file at path, or NULL with a diagnostic. */
static TL_UNUSED const gp_api *tl_plugin_at(const char *path)
{
    gp_plugin *pl;
    char err[1024];
    if (gp_plugin_open(path, &pl, err, sizeof err) != GP_OK) {
        diag("%s", err);
        return NULL;
    }
    if (tl_nopened_ == 0) atexit(tl_close_opened);
    if (tl_nopened_ < (int)(sizeof tl_opened_ / sizeof *tl_opened_)) tl_opened_[tl_nopened_++] = pl;
    return gp_plugin_api(pl);
}

/* The plugin of this build named name (see above), or NULL. */
static TL_UNUSED const gp_api *tl_plugin_by_name(const char *name)
{
    const char *b = getenv("GP_BUILD");
    char path[4096];
    snprintf(path, sizeof path, "%s/plugins/gravplug-%s.so", b ? b : "build", name);
    return tl_plugin_at(path);
}

/* Sets every "name=value" of kv (separated by spaces) on s; a refused one
 * is a diagnostic, for the test's own checks to catch. */
static TL_UNUSED void tl_set_params(const gp_api *api, gp_solver *s, const char *kv)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", kv);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) { diag("'%s' is not name=value", tok); continue; }
        *eq = 0;
        if (api->set_param(s, tok, eq + 1) != GP_OK) diag("set_param %s: %s", tok, api->last_error(s));
    }
}

#endif
