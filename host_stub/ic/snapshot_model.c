/* SPDX-License-Identifier: Apache-2.0 */
/*
 * snapshot_model.c — initial conditions from an HDF5 snapshot (this
 * project's, or a Gadget/SWIFT one): the `snapshot` model, e.g. to start a
 * run from the end of another. Positions, velocities, masses and IDs are
 * taken as they are (units of the file; G = 1 in the host); moved to the
 * centre-of-mass frame only if center = true. Ids must be distinct.
 */
#include "model.h"
#include "snapshot.h"

#include <math.h>

static const gp_ic_opt_info opts[] = {
    {"path", GP_IC_OPT_STRING, "", NULL, "the HDF5 snapshot to read (required)"},
    {"part_type", GP_IC_OPT_INT, "1", "[0,5]", "which PartTypeN group to read"},
    {"center", GP_IC_OPT_BOOL, "false", NULL, "move to the centre-of-mass frame"},
};

static int make(size_t n, gsl_rng *rng, const ic_vals *v, gp_ic *out, char *err, size_t errlen)
{
    (void)rng;
    const char *path = ic_str(v, "path");
    if (!path || !path[0])
        return ic_fail(err, errlen, "Model 'snapshot' needs the option 'path' (an HDF5 snapshot file).");
    if (gp_snapshot_read_type(path, (int)ic_num(v, "part_type"), out, NULL, err, errlen) != 0) return -1;
    if (out->n == 0) return ic_fail(err, errlen, "Snapshot '%s' holds no particles of that type.", path);
    if (n != 0 && n != out->n)
        return ic_fail(err, errlen, "Snapshot '%s' holds %zu particles but %zu were asked for "
                                    "(ask for 0 to take them all).", path, out->n, n);
    for (size_t i = 0; i < out->n; ++i) {
        if (!(out->mass[i] >= 0) || !isfinite(out->mass[i]))
            return ic_fail(err, errlen, "Snapshot '%s': particle %zu has mass %g; masses must be finite "
                                        "and >= 0.", path, i, out->mass[i]);
        for (int k = 0; k < 3; ++k)
            if (!isfinite(out->pos[3 * i + k]) || !isfinite(out->vel[3 * i + k]))
                return ic_fail(err, errlen, "Snapshot '%s': particle %zu has a non-finite position or "
                                            "velocity.", path, i);
    }
    size_t a, b;
    int dup = ic_find_duplicate_id(out->id, out->n, &a, &b);
    if (dup < 0) return ic_fail(err, errlen, "Out of memory checking the ids of '%s'.", path);
    if (dup > 0)
        return ic_fail(err, errlen, "Snapshot '%s': particles %zu and %zu (counting from 0) both have id %llu; "
                                    "ids must be distinct.", path, a, b, (unsigned long long)out->id[a]);
    if (ic_num(v, "center") != 0) ic_to_com_frame(out);
    return 0;
}

const ic_model ic_model_snapshot = {
    "snapshot",
    "particles from an HDF5 snapshot (gravplug/Gadget/SWIFT PartTypeN)",
    opts, sizeof opts / sizeof opts[0], make, NULL,
};
