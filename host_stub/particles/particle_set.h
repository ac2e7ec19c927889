/* SPDX-License-Identifier: Apache-2.0 */
/*
 * particle_set.h — gp_ic, a set of particles as the host library hands
 * them over (part of libgravplug.so): what the initial-conditions models
 * make (ic.h) and what a snapshot is read into (snapshot.h). Its own
 * header below both, so that neither of them includes the other.
 */
#ifndef GP_PARTICLE_SET_H
#define GP_PARTICLE_SET_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A set of particles. pos and vel are 3n doubles, interleaved xyz; mass
 * and id are n values. Arrays are owned by the struct: free with
 * gp_ic_free(). */
typedef struct gp_ic {
    size_t n;
    double *pos, *vel, *mass;
    uint64_t *id;
} gp_ic;

/* Frees the arrays of ic and empties it. NULL and an empty ic are fine. */
GRAVPLUG_EXPORT void gp_ic_free(gp_ic *ic);

#ifdef __cplusplus
}
#endif

#endif /* GP_PARTICLE_SET_H */
