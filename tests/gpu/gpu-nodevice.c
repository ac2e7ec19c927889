/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-nodevice.c — the CUDA plugins on a machine without a usable GPU:
 * they load (the CUDA runtime is linked statically), describe their
 * parameters, and init fails with GP_ERR_DEVICE and a sentence, leaving
 * *out NULL. On a machine with a GPU the init checks are skipped (init then
 * succeeds, which gpu-accuracy and the conformance suite test).
 */
#include <string.h>

#include "tap.h"
#include "gpu-plugin.h"

static void check_plugin(const char *name)
{
    gpu_plugin p;
    char why[1200];
    if (gpu_plugin_open(&p, name, why, sizeof why) != 0) {
        ok(0, "%s loads: %s", name, why);
        return;
    }
    ok(1, "%s loads with dlopen and answers gravplug_entry(1)", name);
    const gp_api *api = p.api;
    gravplug_entry_fn entry = (gravplug_entry_fn)dlsym(p.handle, GRAVPLUG_ENTRY_SYMBOL);
    ok(entry(GRAVPLUG_ABI_MAJOR + 1) == NULL, "%s refuses ABI major %d", name, GRAVPLUG_ABI_MAJOR + 1);
    is_string(api->name, name, "%s: api->name", name);
    ok(api->struct_size == sizeof(gp_api), "%s: struct_size is sizeof(gp_api)", name);
    ok((api->capabilities & GP_CAP_GPU) != 0, "%s: has GP_CAP_GPU", name);

    size_t count = 0;
    const gp_param_info *info = api->describe_params(&count);
    ok(info != NULL && count >= 3, "%s: describe_params lists %zu parameters without a device", name, count);
    int have_G = 0, have_eps = 0, have_prec = 0, complete = 1;
    for (size_t k = 0; info && k < count; ++k) {
        if (!info[k].name || !info[k].default_value || !info[k].doc || !*info[k].doc) complete = 0;
        if (info[k].name && !strcmp(info[k].name, "G")) have_G = 1;
        if (info[k].name && !strcmp(info[k].name, "eps")) have_eps = 1;
        if (info[k].name && !strcmp(info[k].name, "precision")) {
            have_prec = 1;
            if (!info[k].allowed || !strstr(info[k].allowed, "mixed")) complete = 0;
        }
    }
    ok(have_G && have_eps && have_prec, "%s: G, eps and precision are described", name);
    ok(complete, "%s: every parameter has a name, a default and a doc line", name);

    /* a bad parameter is reported as such, device or not */
    gp_param bad = {"no_such_parameter", "1"};
    gp_init_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.params = &bad;
    args.n_params = 1;
    args.device = -1;
    gp_solver *s = (gp_solver *)0x1;
    gp_status st = api->init(&s, &args);
    is_int(st, GP_ERR_UNKNOWN_PARAMETER, "%s: init with an unknown parameter", name);
    ok(s == NULL, "%s: a failed init leaves *out NULL", name);

    s = NULL;
    st = api->init(&s, NULL);
    if (st == GP_OK) {
        diag("%s: a CUDA device is present; the no-device path cannot be tested here", name);
        api->finalize(s);
        skip(3, "a CUDA device is present");
    } else {
        const char *msg = api->last_error(NULL);
        is_int(st, GP_ERR_DEVICE, "%s: init without a usable GPU is GP_ERR_DEVICE", name);
        ok(s == NULL, "%s: *out stays NULL", name);
        ok(msg && strlen(msg) > 20 && strstr(msg, name) && (strstr(msg, "CUDA") || strstr(msg, "GPU")),
           "%s: last_error(NULL) explains it in a sentence", name);
        diag("%s says: %s", name, msg ? msg : "(null)");
    }
    /* the device ordinal is checked too: a huge one never works */
    args.params = NULL;
    args.n_params = 0;
    args.device = 4096;
    s = NULL;
    st = api->init(&s, &args);
    is_int(st, GP_ERR_DEVICE, "%s: init on device 4096 is GP_ERR_DEVICE", name);
    ok(strlen(api->last_error(NULL)) > 20, "%s: with a sentence", name);
    api->finalize(NULL); /* a no-op, never a crash */
    ok(1, "%s: finalize(NULL) is a no-op", name);
    /* the .so stays loaded: unloading a static CUDA runtime at exit is a
     * known source of noise and nothing this test is about */
}

int main(void)
{
    plan_lazy();
    check_plugin("cuda-direct");
    check_plugin("cuda-tree");
    return done_testing();
}
