/*
 * plugin_base.c — errors, logging, instance life cycle, statistics, timer.
 * Parameters live in params.c, particle validation and storage in
 * particles.c.
 */
#include "base/plugin_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The one piece of mutable non-instance state the ABI allows: the reason
 * the last init on this thread failed (last_error(NULL)). */
static _Thread_local char init_error[GP_ERROR_LEN];

const char *gp_status_string(gp_status st)
{
    switch (st) {
    case GP_OK:                    return "GP_OK";
    case GP_ERR_INVALID_ARGUMENT:  return "GP_ERR_INVALID_ARGUMENT";
    case GP_ERR_BAD_STATE:         return "GP_ERR_BAD_STATE";
    case GP_ERR_OUT_OF_MEMORY:     return "GP_ERR_OUT_OF_MEMORY";
    case GP_ERR_DEVICE:            return "GP_ERR_DEVICE";
    case GP_ERR_UNSUPPORTED:       return "GP_ERR_UNSUPPORTED";
    case GP_ERR_UNKNOWN_PARAMETER: return "GP_ERR_UNKNOWN_PARAMETER";
    case GP_ERR_ABI_MISMATCH:      return "GP_ERR_ABI_MISMATCH";
    case GP_ERR_INTERNAL:          return "GP_ERR_INTERNAL";
    }
    return "GP_ERR_UNKNOWN_STATUS";
}

/* "name: " + formatted sentence into dst. */
static void format_sentence(char *dst, size_t len, const char *plugin_name,
                            const char *fmt, va_list ap)
{
    int k = snprintf(dst, len, "%s: ", plugin_name ? plugin_name : "gravplug");
    if (k < 0 || (size_t)k >= len) k = 0;
    vsnprintf(dst + k, len - (size_t)k, fmt, ap);
}

gp_status gp_vfail(gp_base *base, gp_status status, const char *fmt, va_list ap)
{
    char *dst = base ? base->error : init_error;
    format_sentence(dst, GP_ERROR_LEN, base ? base->plugin_name : NULL, fmt, ap);
    if (base) {
        if (base->in_init) memcpy(init_error, base->error, GP_ERROR_LEN);
        if (base->log) base->log(base->log_user, GP_LOG_ERROR, base->error);
    }
    return status;
}

gp_status gp_fail(gp_base *base, gp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gp_vfail(base, status, fmt, ap);
    va_end(ap);
    return status;
}

gp_status gp_init_fail(const gp_init_args *args, const char *plugin_name,
                       gp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format_sentence(init_error, GP_ERROR_LEN, plugin_name, fmt, ap);
    va_end(ap);
    if (args && args->struct_size >= GP_INIT_ARGS_V1_SIZE && args->log)
        args->log(args->log_user, GP_LOG_ERROR, init_error);
    return status;
}

void gp_init_clear_error(void) { init_error[0] = '\0'; }

const char *gp_base_last_error(const gp_base *base)
{
    return base ? base->error : init_error;
}

void gp_log(const gp_base *base, int level, const char *fmt, ...)
{
    if (!base || !base->log) return;
    char msg[GP_ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    format_sentence(msg, sizeof msg, base->plugin_name, fmt, ap);
    va_end(ap);
    base->log(base->log_user, level, msg);
}

gp_status gp_null_instance(const char *plugin_name, const char *fn)
{
    return gp_init_fail(NULL, plugin_name, GP_ERR_INVALID_ARGUMENT,
                        "%s was given a NULL instance; pass the gp_solver "
                        "that init returned", fn);
}

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
    free(base->p.x0);
    free(base->p.vel);
    free(base->p.acc);
    free(base->p.t);
    free(base->p.stated);
    free(base->p.src);
    memset(&base->p, 0, sizeof base->p);
}

gp_status gp_base_get_stats(gp_base *base, gp_stats *out)
{
    if (!out)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "get_stats was given a NULL gp_stats; pass a gp_stats "
                       "with struct_size = sizeof(gp_stats)");
    if (out->struct_size < sizeof(size_t))
        return gp_fail(base, GP_ERR_ABI_MISMATCH,
                       "gp_stats.struct_size is %zu, too small to hold any "
                       "counter; set it to sizeof(gp_stats)", out->struct_size);
    size_t keep = out->struct_size;
    size_t n = keep < sizeof(gp_stats) ? keep : sizeof(gp_stats);
    /* Copy the counters after struct_size, only as far as the caller's
     * struct reaches; struct_size itself stays the caller's. */
    memcpy((char *)out + sizeof(size_t), (const char *)&base->stats + sizeof(size_t),
           n - sizeof(size_t));
    return GP_OK;
}

double gp_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
