/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot.h — HDF5 snapshots in the Gadget/SWIFT layout (part of
 * libgravplug.so), readable as they are by h5py, yt and pynbody:
 *
 *   /Header      attributes Time, Redshift (0), BoxSize (0, no box),
 *                NumPart_ThisFile[6] (uint64), NumPart_Total[6] and
 *                NumPart_Total_HighWord[6] (uint32 low and high words),
 *                MassTable[6] (all 0: masses are stored per particle),
 *                NumFilesPerSnapshot (1), Dimension (3), Omega0 (0),
 *                OmegaLambda (0), HubbleParam (1), Flag_* (0),
 *                Flag_DoublePrecision (1), Code ("gravplug"), Comment
 *   /Units       SWIFT-style: "Unit length in cgs (U_L)", "Unit mass in
 *                cgs (U_M)", "Unit time in cgs (U_t)", "Unit current in cgs
 *                (U_I)" (1), "Unit temperature in cgs (U_T)" (1) when
 *                physical units are given; always "System" (a sentence)
 *                and "G" (1, the gravitational constant in these units)
 *   /PartType1   Coordinates (n x 3 double), Velocities (n x 3 double),
 *                Masses (n double), ParticleIDs (n uint64), and optionally
 *                Acceleration (n x 3) and Potential (n)
 *
 * All particles are dark-matter-like PartType1 (collisionless N-body).
 * Files are written to PATH.tmp and renamed, so a reader never sees half a
 * snapshot and a crash never destroys the previous file of that name.
 *
 * Functions return 0 on success, else -1 with a sentence in err (errlen
 * bytes). They never print (HDF5's own error printing is silenced during
 * the call and restored after).
 */
#ifndef GP_SNAPSHOT_H
#define GP_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"
#include "particle_set.h" /* gp_ic */

#ifdef __cplusplus
extern "C" {
#endif

/* Optional extras for gp_snapshot_write_ex. Zero-initialise, set
 * struct_size = sizeof(gp_snapshot_extra), then fill what you have. */
typedef struct gp_snapshot_extra {
    size_t struct_size;
    double length_cgs;   /* the length unit in cm, or 0: N-body units */
    double mass_cgs;     /* the mass unit in g (with length_cgs); the time
                            unit follows from G = 1 */
    const double *acc;   /* 3n accelerations, or NULL */
    const double *pot;   /* n potentials, or NULL */
    const char *comment; /* free text stored as Header/Comment, or NULL */
} gp_snapshot_extra;

/* Writes n particles at `time`. pos[3n] is required; vel[3n] may be NULL
 * (zeros), mass[n] is required, id[n] may be NULL (0..n-1). N-body units
 * (G = 1). */
GRAVPLUG_EXPORT int gp_snapshot_write(const char *path, double time, size_t n,
                                      const double *pos, const double *vel,
                                      const double *mass, const uint64_t *id,
                                      char *err, size_t errlen);

/* As gp_snapshot_write, with units, accelerations, potentials, a comment.
 * extra may be NULL. */
GRAVPLUG_EXPORT int gp_snapshot_write_ex(const char *path, double time, size_t n,
                                         const double *pos, const double *vel,
                                         const double *mass, const uint64_t *id,
                                         const gp_snapshot_extra *extra,
                                         char *err, size_t errlen);

/* A master file for a snapshot written in parts (one per MPI rank, each
 * by gp_snapshot_write_ex): the same layout, each PartType1 dataset a
 * virtual dataset (HDF5 1.10's VDS) whose rows are the parts' in file
 * order, counts[f] rows from files[f]. Part names are stored as given:
 * a name without a directory is looked up beside the master file, so the
 * master and its parts move together. extra gives the units and comment;
 * its acc and pot say only whether the parts hold those datasets. Readers
 * (h5py, gp_snapshot_read, yt) see one snapshot. */
GRAVPLUG_EXPORT int gp_snapshot_write_virtual(const char *path, double time, size_t nfiles,
                                              const uint64_t *counts, const char *const *files,
                                              const gp_snapshot_extra *extra, char *err,
                                              size_t errlen);

/* Reads PartType1 of a snapshot (this layout, or a Gadget/SWIFT file) into
 * *out (free with gp_ic_free) and its Header/Time into *time (time may be
 * NULL). Coordinates and velocities stored as float are widened; masses
 * missing from PartType1 come from MassTable[1]; missing IDs are 0..n-1;
 * missing velocities are an error. */
GRAVPLUG_EXPORT int gp_snapshot_read(const char *path, gp_ic *out, double *time,
                                     char *err, size_t errlen);

/* As gp_snapshot_read for PartType0 .. PartType5. */
GRAVPLUG_EXPORT int gp_snapshot_read_type(const char *path, int part_type, gp_ic *out,
                                          double *time, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* GP_SNAPSHOT_H */
