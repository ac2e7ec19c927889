# SPDX-License-Identifier: Apache-2.0
"""ctypes mirror of abi/gravplug.h (ABI 1.1), member for member.

Keep this file in the order of the header: a minor ABI bump only appends
members at the end of structs. The loader accepts a plugin table of at
least the 1.0 size (API_SIZE_1_0); api_has(api, member) says whether an
appended member is there to call (the header's GRAVPLUG_API_HAS).
"""
import ctypes
import enum
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int,
                    c_size_t, c_uint32, c_uint64, c_void_p)

ABI_MAJOR = 1
ABI_MINOR = 3
ENTRY_SYMBOL = "gravplug_entry"


class Status(enum.IntEnum):
    """gp_status: GP_OK is 0, every other value is a failure."""
    OK = 0
    INVALID_ARGUMENT = 1
    BAD_STATE = 2
    OUT_OF_MEMORY = 3
    DEVICE = 4
    UNSUPPORTED = 5
    UNKNOWN_PARAMETER = 6
    ABI_MISMATCH = 7
    INTERNAL = 8

    @property
    def c_name(self):
        """The C spelling, e.g. 'GP_ERR_BAD_STATE'."""
        return "GP_OK" if self == 0 else "GP_ERR_" + self.name


class Capability(enum.IntFlag):
    """Bits of gp_api.capabilities, bit 0 first."""
    GPU = 1 << 0
    TREE = 1 << 1
    EXACT = 1 << 2
    ACTIVE_SUBSET = 1 << 3
    FIELD = 1 << 4
    POTENTIAL = 1 << 5
    REFIT = 1 << 6
    PREDICT = 1 << 7           # ABI 1.1
    SOURCE_SUBSET = 1 << 8
    MPI = 1 << 9
    JERK = 1 << 10
    NEIGHBOURS = 1 << 11
    SOURCE_GROUPS = 1 << 12    # ABI 1.3


class ParamType(enum.IntEnum):
    DOUBLE = 0
    INT = 1
    BOOL = 2
    ENUM = 3


LOG_ERROR, LOG_WARNING, LOG_INFO, LOG_DEBUG = 0, 1, 2, 3

gp_status = c_int          # a C enum is an int on every ABI we build for
gp_solver_p = c_void_p     # opaque instance


class GpParam(Structure):
    _fields_ = [("name", c_char_p), ("value", c_char_p)]


GpLogFn = CFUNCTYPE(None, c_void_p, c_int, c_char_p)


class GpInitArgs(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("params", POINTER(GpParam)),
        ("n_params", c_size_t),
        ("log", GpLogFn),
        ("log_user", c_void_p),
        ("device", c_int),
        ("mpi_comm", c_void_p),            # ABI 1.1
    ]


class GpParamInfo(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("type", c_int),
        ("default_value", c_char_p),
        ("allowed", c_char_p),
        ("doc", c_char_p),
    ]


class GpStats(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("force_calls", c_uint64),
        ("field_calls", c_uint64),
        ("tree_builds", c_uint64),
        ("tree_refits", c_uint64),
        ("pp_interactions", c_uint64),
        ("pc_interactions", c_uint64),
        ("seconds_build", c_double),
        ("seconds_moments", c_double),
        ("seconds_walk", c_double),
        ("seconds_transfer", c_double),
    ]


c_double_p = POINTER(c_double)
c_uint32_p = POINTER(c_uint32)


class GpOutputs(Structure):
    """ABI 1.2 (1.3's two members appended): the outputs of
    compute_forces_ex and compute_field_ex (gravplug.h)."""
    _fields_ = [
        ("struct_size", c_size_t),
        ("acc", c_double_p),
        ("pot", c_double_p),
        ("jerk", c_double_p),
        ("nn_index", c_uint32_p),
        ("nn_dist2", c_double_p),
        ("pair_step", c_double_p),
        ("nb_radius", c_double_p),
        ("nb_step", c_double),
        # ABI 1.3: set only for a plugin with abi_minor >= 3
        ("pair_step_even", c_double_p),
        ("nb_step_even", c_double),
    ]

DescribeParamsFn = CFUNCTYPE(POINTER(GpParamInfo), POINTER(c_size_t))
InitFn = CFUNCTYPE(gp_status, POINTER(gp_solver_p), POINTER(GpInitArgs))
FinalizeFn = CFUNCTYPE(None, gp_solver_p)
SetParamFn = CFUNCTYPE(gp_status, gp_solver_p, c_char_p, c_char_p)
GetParamFn = CFUNCTYPE(gp_status, gp_solver_p, c_char_p, ctypes.c_char_p, c_size_t)
SetParticlesFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_double_p, c_double_p)
UpdatePositionsFn = CFUNCTYPE(gp_status, gp_solver_p, c_double_p)
SetActiveSubsetFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p)
ComputeForcesFn = CFUNCTYPE(gp_status, gp_solver_p, c_double_p, c_double_p)
ComputeFieldFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_double_p,
                           c_double_p, c_double_p)
GetStatsFn = CFUNCTYPE(gp_status, gp_solver_p, POINTER(GpStats))
LastErrorFn = CFUNCTYPE(c_char_p, gp_solver_p)
# ABI 1.1
SetStateFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p, c_double_p,
                       c_double_p, c_double_p, c_double_p)
PredictFn = CFUNCTYPE(gp_status, gp_solver_p, c_double)
GetPositionsFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p, c_double_p)
SetSourceSubsetFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p)
UpdateMassesFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p, c_double_p)
# ABI 1.2
SetStateJerkFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p, c_double_p,
                           c_double_p, c_double_p, c_double_p, c_double_p)
GetVelocitiesFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p, c_double_p)
ComputeForcesExFn = CFUNCTYPE(gp_status, gp_solver_p, POINTER(GpOutputs))
GetNeighboursFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, POINTER(c_uint64), c_uint32_p,
                            POINTER(c_size_t))
# ABI 1.3
SetSourceGroupsFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_uint32_p)
ComputeFieldExFn = CFUNCTYPE(gp_status, gp_solver_p, c_size_t, c_double_p, c_double_p,
                             c_uint32_p, POINTER(GpOutputs))


class GpApi(Structure):
    _fields_ = [
        ("abi_major", c_uint32),
        ("abi_minor", c_uint32),
        ("struct_size", c_size_t),
        ("name", c_char_p),
        ("version", c_char_p),
        ("capabilities", c_uint64),
        ("describe_params", DescribeParamsFn),
        ("init", InitFn),
        ("finalize", FinalizeFn),
        ("set_param", SetParamFn),
        ("get_param", GetParamFn),
        ("set_particles", SetParticlesFn),
        ("update_positions", UpdatePositionsFn),
        ("set_active_subset", SetActiveSubsetFn),
        ("compute_forces", ComputeForcesFn),
        ("compute_field", ComputeFieldFn),
        ("get_stats", GetStatsFn),
        ("last_error", LastErrorFn),
        # ABI 1.1: read only when api_has() says the plugin's table has them
        ("set_state", SetStateFn),
        ("predict", PredictFn),
        ("get_positions", GetPositionsFn),
        ("set_source_subset", SetSourceSubsetFn),
        ("update_masses", UpdateMassesFn),
        # ABI 1.2: the same rule
        ("set_state_jerk", SetStateJerkFn),
        ("get_velocities", GetVelocitiesFn),
        ("compute_forces_ex", ComputeForcesExFn),
        ("get_neighbours", GetNeighboursFn),
        # ABI 1.3: the same rule
        ("set_source_groups", SetSourceGroupsFn),
        ("compute_field_ex", ComputeFieldExFn),
    ]


EntryFn = CFUNCTYPE(POINTER(GpApi), c_uint32)

# The members of the 1.0 layout a plugin must fill (hosts call them without
# asking); libgravplug's loader refuses a table that leaves one NULL.
REQUIRED_1_0 = ("name", "version", "describe_params", "init", "finalize", "set_param", "get_param",
                "set_particles", "update_positions", "set_active_subset", "compute_forces",
                "compute_field", "get_stats", "last_error")

# Sizes of the first published layouts (ABI 1.0) on this platform: a plugin
# table smaller than this is rejected before any member is touched.
API_SIZE_1_0 = GpApi.set_state.offset


def api_has(api, member):
    """GRAVPLUG_API_HAS: the plugin's table covers `member` (its struct_size)
    and fills it (not NULL). Never reads a member past struct_size."""
    field = getattr(GpApi, member)
    if api.struct_size < field.offset + field.size:
        return False
    return bool(getattr(api, member))
