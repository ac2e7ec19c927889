/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-engine-trust.c — mpi-tree's engine_plugin is opened through the
 * loader, with docs/TRUST.md's checks: a file anyone may rewrite is
 * refused (it used to be dlopened, its constructors run, and used), and
 * so is a table without its 1.0 members. One process (a singleton MPI
 * run); argv[1] is mpi-tree, argv[2] a plugin to copy, argv[3] the loader
 * test's NULL-member fixture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "tap.h"

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t k;
    int ok_ = in && out;
    while (ok_ && (k = fread(buf, 1, sizeof buf, in)) > 0) ok_ = fwrite(buf, 1, k, out) == k;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok_ = 0;
    return ok_;
}

int main(int argc, char **argv)
{
    char why[2300];
    if (argc < 4) bail("usage: mpi-engine-trust MPI_TREE.so PLUGIN.so NULLMEMBER.so");
    plan(3);
    char err[2048];
    gp_plugin *pl = NULL;
    if (gp_plugin_open(argv[1], &pl, err, sizeof err) != GP_OK) bail(err);
    const gp_api *api = gp_plugin_api(pl);
    gp_solver *s = NULL;
    if (api->init(&s, NULL) != GP_OK) {
        snprintf(why, sizeof why, "mpi-tree init: %s", api->last_error(NULL));
        bail(why);
    }

    char dir[] = "/tmp/gp-engine-trust-XXXXXX", eng[256];
    if (!mkdtemp(dir)) bail("no temporary directory");
    snprintf(eng, sizeof eng, "%s/gravplug-cuda-tree.so", dir);
    if (!copy_file(argv[2], eng)) bail("cannot copy the plugin");
    chmod(eng, 0666);
    gp_status st = api->set_param(s, "engine_plugin", eng);
    if (st == GP_OK) st = api->set_param(s, "engine", "cuda-tree");
    const char *msg = api->last_error(s);
    ok(st != GP_OK && strstr(msg, "writable by every user") && strstr(msg, eng),
       "engine_plugin writable by every user: refused, naming it: %s", msg);
    char v[64] = "";
    api->get_param(s, "engine", v, sizeof v);
    ok(!strcmp(v, "cpu-tree"), "the instance keeps engine = cpu-tree (%s)", v);

    st = api->set_param(s, "engine", "cpu-tree");
    if (st == GP_OK) st = api->set_param(s, "engine_plugin", argv[3]);
    if (st == GP_OK) st = api->set_param(s, "engine", "cuda-tree");
    msg = api->last_error(s);
    ok(st != GP_OK && strstr(msg, "describe_params"), "an engine table with a NULL member: refused: %s", msg);

    api->finalize(s);
    gp_plugin_close(pl);
    remove(eng);
    rmdir(dir);
    return tap_failed ? 1 : 0;
}
