/* SPDX-License-Identifier: Apache-2.0 */
/*
 * errors.c — the sentence a failed call leaves behind (per instance, or per
 * thread before an instance exists) and its copy to the host's log
 * callback.
 */
#include "base/base_instance.h"

#include <stdio.h>
#include <string.h>

/* The one piece of mutable non-instance state the ABI allows: the reason
 * the last init on this thread failed (last_error(NULL)). */
static _Thread_local char init_error[GP_ERROR_LEN];

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
