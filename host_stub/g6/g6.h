/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6.h — libgravplug-g6: the GRAPE-6 library's calls (as Sapporo and
 * Sapporo2 export them: Fortran-style names with a trailing underscore,
 * every argument by pointer) on any gravplug plugin. docs/GRAPE6.md says
 * how to link a code and which semantics were chosen where GRAPE-6 and
 * Sapporo differ. The C by-value names (g6_open, g6calc_firsthalf, ...)
 * belong to the clients (ph4's grape.cc defines them), so none is here.
 *
 * One j-memory per process: cluster_id is accepted and ignored, as
 * Sapporo does; g6_open's id is the GPU ordinal for a GPU plugin.
 * Return values: 0 on success; on failure -1 (and the plugin's sentence
 * on stderr, prefixed "gravplug-g6:"); g6_read_neighbour_list_ and
 * g6_get_neighbour_list_ return 1 on overflow. The plugin and its
 * parameters come from the environment or a file (g6_config.h).
 */
#ifndef GP_G6_H
#define GP_G6_H

#include "gravplug.h"

#ifdef __cplusplus
extern "C" {
#endif

GRAVPLUG_EXPORT int g6_open_(int *id);
GRAVPLUG_EXPORT int g6_open_special(int ndev, int *list); /* Sapporo2: the first listed device */
GRAVPLUG_EXPORT int g6_close_(int *id);
GRAVPLUG_EXPORT int g6_npipes_(void);
GRAVPLUG_EXPORT int g6_set_tunit_(double *t);   /* fixed-point units: nothing to do in double */
GRAVPLUG_EXPORT int g6_set_xunit_(double *x);
GRAVPLUG_EXPORT int g6_set_ti_(int *id, double *ti);
GRAVPLUG_EXPORT int g6_set_j_particle_(int *cluster_id, int *address, int *index, double *tj, double *dtj,
                                       double *mass, double k18[3], double j6[3], double a2[3], double v[3],
                                       double x[3]);
GRAVPLUG_EXPORT void g6calc_firsthalf_(int *cluster_id, int *nj, int *ni, int index[], double xi[][3],
                                       double vi[][3], double aold[][3], double j6old[][3], double phiold[],
                                       double *eps2, double h2[]);
GRAVPLUG_EXPORT int g6calc_lasthalf_(int *cluster_id, int *nj, int *ni, int index[], double xi[][3],
                                     double vi[][3], double *eps2, double h2[], double acc[][3],
                                     double jerk[][3], double pot[]);
GRAVPLUG_EXPORT int g6calc_lasthalf2_(int *cluster_id, int *nj, int *ni, int index[], double xi[][3],
                                      double vi[][3], double *eps2, double h2[], double acc[][3],
                                      double jerk[][3], double pot[], int inn[]);
GRAVPLUG_EXPORT int g6_initialize_jp_buffer_(int *cluster_id, int *buf_size);
GRAVPLUG_EXPORT int g6_flush_jp_buffer_(int *cluster_id);
GRAVPLUG_EXPORT int g6_reset_(int *cluster_id);
GRAVPLUG_EXPORT int g6_reset_fofpga_(int *cluster_id);
GRAVPLUG_EXPORT int g6_read_neighbour_list_(int *cluster_id);
GRAVPLUG_EXPORT int g6_get_neighbour_list_(int *cluster_id, int *ipipe, int *maxlength, int *n_neighbours,
                                           int neighbour_list[]);
/* sapporo_light's: AMUSE's configure looks for it. One: the plugin. */
GRAVPLUG_EXPORT int get_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
