/* SPDX-License-Identifier: Apache-2.0 */
/*
 * instance.c — an instance's life cycle: allocation of the plugin's
 * struct gp_solver, its gp_base filled from the init args (log callback,
 * device, parameter defaults then the caller's parameters), and freeing
 * what the base holds.
 */
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_params.h"

#include <stdlib.h>
#include <string.h>

gp_status gp_solver_create(gp_solver **out, size_t size, const char *plugin_name,
                           const gp_init_args *args,
                           const gp_param_info *info, size_t n_info)
{
    gp_init_clear_error();
    if (!out)
        return gp_init_fail(args, plugin_name, GP_ERR_INVALID_ARGUMENT,
                            "init was given a NULL out pointer; pass the address "
                            "of a gp_solver *");
    *out = NULL;
    void *mem = calloc(1, size);
    if (!mem)
        return gp_init_fail(args, plugin_name, GP_ERR_OUT_OF_MEMORY,
                            "init: no memory for a solver instance");
    gp_base *base = mem; /* gp_base is the first member of every gp_solver */
    gp_status st = gp_base_init(base, plugin_name, args, info, n_info);
    if (st != GP_OK) {
        gp_base_free(base);
        free(mem);
        return st;
    }
    *out = mem;
    return GP_OK;
}

gp_status gp_base_init(gp_base *base, const char *plugin_name,
                       const gp_init_args *args,
                       const gp_param_info *info, size_t n_info)
{
    gp_init_clear_error();
    base->plugin_name = plugin_name;
    base->in_init = 1;
    base->device = -1;
    base->error[0] = '\0';
    base->stats.struct_size = sizeof base->stats;

    if (args && args->struct_size < GP_INIT_ARGS_V1_SIZE)
        return gp_fail(base, GP_ERR_ABI_MISMATCH,
                       "gp_init_args.struct_size is %zu, smaller than the "
                       "first published layout (%zu bytes); set it to "
                       "sizeof(gp_init_args) from gravplug.h",
                       args->struct_size, (size_t)GP_INIT_ARGS_V1_SIZE);
    if (args) {
        base->log = args->log;
        base->log_user = args->log_user;
        base->device = args->device;
    }
    if (n_info > GP_MAX_PARAMS)
        return gp_fail(base, GP_ERR_INTERNAL,
                       "the plugin declares %zu parameters, more than "
                       "GP_MAX_PARAMS (%d); please report this bug",
                       n_info, GP_MAX_PARAMS);
    base->param_info = info;
    base->n_params = n_info;
    for (size_t k = 0; k < n_info; ++k) {
        char msg[GP_ERROR_LEN];
        if (gp_param_parse(&info[k], info[k].default_value, &base->param[k],
                           msg, sizeof msg) != GP_OK)
            return gp_fail(base, GP_ERR_INTERNAL,
                           "the default of parameter '%s' does not parse "
                           "(%s); please report this bug", info[k].name, msg);
    }
    if (args && args->n_params > 0) {
        if (!args->params)
            return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                           "gp_init_args.n_params is %zu but params is NULL; "
                           "pass an array of %zu gp_param or set n_params to 0",
                           args->n_params, args->n_params);
        for (size_t k = 0; k < args->n_params; ++k) {
            gp_status st = gp_base_set_param(base, args->params[k].name,
                                             args->params[k].value);
            if (st != GP_OK) return st;
        }
    }
    base->in_init = 0;
    base->error[0] = '\0';
    return GP_OK;
}

void gp_base_free(gp_base *base)
{
    if (!base) return;
    free(base->p.pos);
    free(base->p.mass);
    free(base->p.active);
    free(base->p.seen);
    free(base->p.checked);
    free(base->p.x0);
    free(base->p.vel);
    free(base->p.acc);
    free(base->p.t);
    free(base->p.stated);
    free(base->p.jerk);
    free(base->p.third);
    gp_neighbours_forget(base);
    free(base->p.src);
    gp_groups_clear(base);
    memset(&base->p, 0, sizeof base->p);
}
