/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6_config.h — which plugin, parameters and device libgravplug-g6 drives,
 * read once by g6_open from a small file and the environment.
 *
 *   GRAVPLUG_G6_CONFIG   a file of "key = value" lines ('#' comments):
 *                        plugin, device, npipes, nbmax, route, and
 *                        param.NAME for any plugin parameter;
 *   GRAVPLUG_G6_PLUGIN   the plugin (short name or path), default cpu-direct;
 *   GRAVPLUG_G6_PARAMS   "name=value,name=value" plugin parameters;
 *   GRAVPLUG_G6_DEVICE   the GPU ordinal (default: g6_open's argument);
 *   GRAVPLUG_G6_NPIPES   i-particles per g6calc call (g6_npipes), 256;
 *   GRAVPLUG_G6_NBMAX    the neighbour-list length past which
 *                        g6_read_neighbour_list reports an overflow, 256;
 *   GRAVPLUG_G6_ROUTE    auto | field | held: how i-particles reach the
 *                        plugin (auto: compute_field_ex where it exists).
 * The environment wins over the file; later parameters win over earlier.
 */
#ifndef GP_G6_CONFIG_H
#define GP_G6_CONFIG_H

#include <stddef.h>

#include "gravplug.h"

#define G6_MAX_PARAMS 32

typedef enum g6_route { G6_ROUTE_AUTO = 0, G6_ROUTE_FIELD, G6_ROUTE_HELD } g6_route;

typedef struct g6_config {
    char plugin[512];
    int device;      /* -1: g6_open's argument */
    int npipes;
    int nbmax;
    g6_route route;
    size_t n_params;
    char names[G6_MAX_PARAMS][64];
    char values[G6_MAX_PARAMS][256];
    gp_param params[G6_MAX_PARAMS]; /* pointing into names/values */
} g6_config;

/* Fills c from the defaults, the file and the environment. Returns 0, or
 * -1 with a sentence in err naming the bad setting. */
int g6_config_read(g6_config *c, char *err, size_t errlen);

#endif
