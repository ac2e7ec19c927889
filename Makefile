# SPDX-License-Identifier: Apache-2.0
# gravplug — one non-recursive Makefile. Each directory that builds something
# has a module.mk that appends to the variables below; this file holds the
# shared rules. `make` builds everything, `make test` runs the TAP suite.

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= gcc
PROVE   ?= prove
# The version lives in the VERSION file alone: this Makefile, the Python
# package (python/pyproject.toml reads it) and CITATION.cff agree with it
# (tests/build/version-agree.sh).
VERSION := $(strip $(shell cat $(dir $(lastword $(MAKEFILE_LIST)))VERSION 2>/dev/null))
ifeq ($(VERSION),)
$(error the VERSION file is missing or empty)
endif

# -fvisibility=hidden everywhere: plugins export gravplug_entry alone
# (enforced again by plugin/plugin.map), libraries mark their API explicitly.
WARN     := -Wall -Wextra -Wshadow -Wno-unused-parameter
# GCC's guesses about snprintf truncation are silenced where the code
# truncates on purpose; clang has no such warning and would warn about
# the option itself.
NO_TRUNCATION_WARNING := $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),,-Wno-format-truncation)
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -fPIC -fvisibility=hidden -fopenmp $(WARN) -D_GNU_SOURCE \
            -Iabi -Iplugin -DGP_VERSION='"$(VERSION)"' -DGP_BUILD_PLUGIN_DIR='"$(abspath $(BUILD))/plugins"'
LDLIBS   += -lm
OMPFLAGS := -fopenmp

# CUDA: found automatically; without nvcc the CUDA parts are left out.
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
# Machine code for the GPUs people have: sm_70 (V100), sm_75 (T4, RTX 20xx),
# sm_80 (A100, A30), sm_86 (RTX 30xx, A10, A40), sm_89 (RTX 40xx, L4, L40S),
# sm_90 (H100, H200); plus compute_90 PTX, which the driver compiles for GPUs
# newer than all of these. Architectures this nvcc cannot build are left out
# (CUDA 13 dropped sm_70: a V100 needs CUDA 12 or older). Narrower is faster
# to build: `make CUDA_ARCHS=86`, `make CUDA_ARCHS=native` (the GPUs of the
# building machine), or nvcc's flags whole in CUDA_ARCH. `make cuda-arch`
# prints what a build would use.
CUDA_ARCHS ?= 70 75 80 86 89 90
# PTX of the last architecture built unless named (CUDA_PTX=none: no PTX)
CUDA_PTX   ?=
ifeq ($(origin CUDA_ARCH),undefined)
ifneq ($(NVCC),)
ifeq ($(strip $(CUDA_ARCHS)),native)
CUDA_ARCH := -arch=native
else
GP_NVCC_ARCHS := $(patsubst compute_%,%,$(filter compute_%,$(shell $(NVCC) --list-gpu-arch 2>/dev/null)))
# an nvcc too old to list its architectures is given the whole list
GP_CUDA_ARCHS := $(if $(GP_NVCC_ARCHS),$(filter $(GP_NVCC_ARCHS),$(CUDA_ARCHS)),$(CUDA_ARCHS))
ifeq ($(origin CUDA_ARCHS),command line)
ifneq ($(filter-out $(GP_CUDA_ARCHS),$(CUDA_ARCHS)),)
$(info gravplug: $(NVCC) cannot build sm_$(firstword $(filter-out $(GP_CUDA_ARCHS),$(CUDA_ARCHS))) (it lists $(GP_NVCC_ARCHS)); left out)
endif
endif
GP_CUDA_PTX := $(filter-out none,$(or $(CUDA_PTX),$(lastword $(GP_CUDA_ARCHS))))
CUDA_ARCH := $(foreach a,$(GP_CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
             $(foreach a,$(GP_CUDA_PTX),-gencode arch=compute_$(a),code=compute_$(a))
endif
endif
endif
# The kernels depend on a file holding these flags, rewritten when make
# reads this file for a build (not for `make cuda-arch`) and the flags differ
# from the last build's: the kernels are rebuilt for new architectures, and
# only then (an unchanged file leaves `make -q` content too).
GP_CUDA_ARCH_STAMP := $(BUILD)/obj/cuda-arch.flags
ifneq ($(NVCC),)
ifneq ($(filter-out cuda-arch clean,$(or $(MAKECMDGOALS),all)),)
ifneq ($(shell cat $(GP_CUDA_ARCH_STAMP) 2>/dev/null),$(strip $(CUDA_ARCH)))
$(shell mkdir -p $(BUILD)/obj && echo '$(strip $(CUDA_ARCH))' > $(GP_CUDA_ARCH_STAMP))
endif
endif
endif
NVCCFLAGS ?= -O3 -g -lineinfo
NVCCFLAGS += $(CUDA_ARCH) -std=c++17 -Xcompiler -fPIC,-fvisibility=hidden,-fopenmp \
             -Iabi -Iplugin -DGP_VERSION='"$(VERSION)"' --expt-relaxed-constexpr

# Filled in by module.mk files.
PLUGINS :=   # build/plugins/gravplug-NAME.so
LIBS    :=   # shared/static libraries
BINS    :=   # host programs
TESTS   :=   # TAP producers run by prove (executables under build/t/)
BENCHES :=   # benchmark programs
CPU_PLUGINS :=  # plugins also run under valgrind in the test suite
INSTALL_MAN1 :=    # manual pages, installed into $(PREFIX)/share/man/man1

# ---- libgravplug.so: its parts and its public headers, in one place -------
# The host library (build/lib/libgravplug.so) is built from these folders,
# each module.mk appending its objects to HOSTLIB_OBJS (an object from any
# other folder stops the build, below the includes):
#   abi/                  the loader, the choice of a plugin, file checks
#   integrators/          gp_sim: the time integration
#   host_stub/particles/  gp_ic, the particle set
#   host_stub/snapshot/   HDF5 snapshots
#   host_stub/ic/         the initial-condition models
# Its public headers, installed into $(PREFIX)/include/gravplug, are
# HOSTLIB_HEADERS; INSTALL_HEADERS adds those of the other library `make
# install` ships (libgravplug-g6, host_stub/g6/module.mk).
HOSTLIB_PARTS   := abi integrators host_stub/particles host_stub/snapshot host_stub/ic
HOSTLIB_HEADERS := abi/gravplug.h abi/gravplug_loader.h abi/gravplug_predict.h abi/gravplug_params.h \
                   integrators/gp_sim.h integrators/gp_integrator.h \
                   host_stub/particles/particle_set.h host_stub/snapshot/snapshot.h host_stub/ic/ic.h
HOSTLIB_OBJS    :=
HOSTLIB_LDLIBS  := -ldl -lm
INSTALL_HEADERS := $(HOSTLIB_HEADERS)

# Every variable a module.mk may name in a rule's prerequisites is defined
# here, above the includes: make expands prerequisites when it reads a rule,
# so a variable defined later would be empty there (a fresh clone's serial
# `make` then links against a libgravplug.so nobody built; .ci/build-check
# proves the order on fresh clones).
HOSTLIB := $(BUILD)/lib/libgravplug.so
LIBS    += $(HOSTLIB)
# The host library is a versioned shared library: the file is
# libgravplug.so.$(VERSION), its SONAME libgravplug.so.$(HOSTLIB_MAJOR) (what
# programs record and ask for at run time), and libgravplug.so (what -lgravplug
# finds when linking) points at it. HOSTLIB_MAJOR changes only when the
# library's exported interface changes incompatibly, independently of the
# package version and of the plugin ABI's version.
HOSTLIB_MAJOR  := 1
HOSTLIB_SONAME := libgravplug.so.$(HOSTLIB_MAJOR)
HOSTLIB_REAL   := libgravplug.so.$(VERSION)

.PHONY: all test bench install clean check-exports cuda-arch
all:

# The floors first: what the plugins link (base, octree, cuda-base) defines
# the object lists their rules name; then every other code folder in name
# order.
FLOOR_MODULES := abi/module.mk plugin/base/module.mk plugin/octree/module.mk plugin/cuda-base/module.mk
include $(FLOOR_MODULES)
include $(filter-out $(FLOOR_MODULES) tests/%,$(sort $(wildcard */module.mk */*/module.mk)))
# The tests last: tests/module.mk reads its sub-folders in its own order.
include tests/module.mk

GP_HOSTLIB_STRAYS := $(filter-out $(foreach p,$(HOSTLIB_PARTS),$(BUILD)/obj/$(p)/%),$(HOSTLIB_OBJS))
ifneq ($(GP_HOSTLIB_STRAYS),)
$(error libgravplug.so is built from HOSTLIB_PARTS alone (Makefile), but a module.mk adds $(GP_HOSTLIB_STRAYS): add its folder there, or build it elsewhere)
endif

all: $(PLUGINS) $(LIBS) $(BINS) $(TESTS) $(BENCHES)

# Targets whose module.mk is read before the plugins' (sorted include order)
# get their plugin prerequisites here, once PLUGINS is complete.
run demo swap-example: $(PLUGINS)

# What the Python wheel carries (python/setup.py runs `make python-native`
# and copies the files named on the line it prints): the host library and
# the plugins that need nothing but the system's libraries; mpi-tree, which
# needs an MPI library and mpirun, stays out.
PY_NATIVE_PLUGINS = $(filter-out %/gravplug-mpi-tree.so,$(PLUGINS))
.PHONY: python-native
python-native: $(BUILD)/lib/$(HOSTLIB_REAL) $(PY_NATIVE_PLUGINS)
	@echo "gravplug-native: $(abspath $(BUILD)/lib/$(HOSTLIB_REAL)) $(abspath $(PY_NATIVE_PLUGINS))"

# ---- shared compile rules ------------------------------------------------
$(BUILD)/obj/%.o: %.c VERSION
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu VERSION $(GP_CUDA_ARCH_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# (written above, while make reads this file; this rule only names it)
$(GP_CUDA_ARCH_STAMP):
	@mkdir -p $(dir $@)
	@echo '$(strip $(CUDA_ARCH))' > $@

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# A plugin exports gravplug_entry and nothing else (version script).
# -z nodelete: dlclose never unmaps a plugin. OpenMP worker threads (libgomp,
# pulled in by the plugin) and the static CUDA runtime's exit handlers would
# otherwise run unmapped code after a host closes the plugin.
# $(LDFLAGS) here, in the host library's link and in the installed programs'
# links: a distribution's link flags (Debian's hardening: -Wl,-z,relro
# -Wl,-z,now) reach everything `make install` ships.
PLUGIN_LDFLAGS = -shared -Wl,--version-script=plugin/plugin.map -Wl,--no-undefined -Wl,-z,nodelete $(LDFLAGS)

# The host library (HOSTLIB, defined above the includes): everything a host
# (gravhost, Python, a user's C code) links against. Its exported names all
# start with gp_ (abi/libgravplug.map enforces it, a test checks it).
# The build tree holds the same three names as an installed tree, so the
# programs linked here (recording the SONAME) run from it through their rpath.
$(BUILD)/lib/$(HOSTLIB_REAL): $(HOSTLIB_OBJS) abi/libgravplug.map
	@mkdir -p $(dir $@)
	$(CC) -shared -fopenmp -Wl,-soname,$(HOSTLIB_SONAME) -Wl,--version-script=abi/libgravplug.map \
	    $(LDFLAGS) -o $@ $(HOSTLIB_OBJS) $(HOSTLIB_LDLIBS)
$(HOSTLIB): $(BUILD)/lib/$(HOSTLIB_REAL)
	ln -sf $(HOSTLIB_REAL) $(dir $@)$(HOSTLIB_SONAME)
	ln -sf $(HOSTLIB_SONAME) $@

# ---- tests ---------------------------------------------------------------
# prove runs TEST_JOBS tests at a time; tests/schedule.yml runs the MPI
# tests first and alone, then the rest side by side, those that run make
# or pip in the shared trees one after the other. TEST_JOBS=1 runs them all
# one after the other. Each line says when its test ended and how long it
# took (--timer).
TEST_JOBS ?= 2
PROVE_RUN = HARNESS_RULESFILE=$(abspath tests/schedule.yml) $(PROVE) -j$(TEST_JOBS) --timer -e ''
test: all
	$(PROVE_RUN) $(sort $(TESTS))

# ---- sanitizers ------------------------------------------------------------
# make sanitize: everything rebuilt under $(BUILD)/sanitize with
# AddressSanitizer and UndefinedBehaviorSanitizer (CUDA left out), then the
# suite run there with GP_SANITIZE=1 (the tests that cannot run instrumented
# say why they skip), with LeakSanitizer on (tests/lsan.supp names the
# libraries' own leaks). The tests that start MPI (those named mpi, and the
# demo, toy-scheme and tree-params, which load mpi-tree) run first, without
# leak checks: OpenMPI's allocations are reachable by suppressions only
# through the full unwinder, which made mpi-gravhost.t 2.3x slower and once crashed
# LeakSanitizer's own tracer there (bench/results/sanitizers/raw/sanitizers.md).
# The Python tests are left out: an interpreter loads instrumented libraries
# only with the runtime preloaded into all it starts.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
.PHONY: sanitize sanitize-run
sanitize:
	env CFLAGS="-O1 -g $(SAN_FLAGS) -fno-omit-frame-pointer" LDFLAGS="$(SAN_FLAGS)" LDLIBS="$(SAN_FLAGS)" \
	    $(MAKE) BUILD=$(BUILD)/sanitize NVCC= sanitize-run
SAN_TESTS = $(filter-out $(BUILD)/t/python-%.t,$(sort $(TESTS)))
SAN_MPI_TESTS = $(foreach t,$(SAN_TESTS),$(if $(findstring mpi,$(notdir $(t))),$(t))) \
    $(filter $(addprefix $(BUILD)/t/,examples-demo.t toy-scheme.t tree-params.t),$(SAN_TESTS))
sanitize-run: all
	ASAN_OPTIONS=detect_leaks=0 GP_SANITIZE=1 GP_BUILD=$(abspath $(BUILD)) $(PROVE_RUN) $(SAN_MPI_TESTS)
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	    GP_SANITIZE=1 GP_BUILD=$(abspath $(BUILD)) $(PROVE_RUN) $(filter-out $(SAN_MPI_TESTS),$(SAN_TESTS))

# ---- install ---------------------------------------------------------------
# make install PREFIX=/some/prefix [DESTDIR=staging]:
#   $(PREFIX)/include/gravplug/   the public headers (INSTALL_HEADERS:
#                                 libgravplug.so's HOSTLIB_HEADERS above, and
#                                 g6.h); they include each other by their
#                                 bare names, so they work from there
#   $(PREFIX)/lib/libgravplug.so.$(VERSION), .so.$(HOSTLIB_MAJOR) and .so
#                                 the host library, its SONAME link and its
#                                 link-time name
#   $(PREFIX)/lib/gravplug/       the plugins, gravplug-NAME.so
#   $(PREFIX)/lib/pkgconfig/gravplug.pc   (Cflags -I$(PREFIX)/include/gravplug)
#   $(PREFIX)/bin/                the host programs (BINS)
#   $(PREFIX)/share/man/man1/     the manual pages (INSTALL_MAN1)
# The installed libgravplug.so finds plugins in the lib/gravplug directory
# next to itself, so `pkg-config --cflags --libs gravplug` is all a host needs.
# `make uninstall` (same PREFIX and DESTDIR) removes exactly these files,
# named from the same lists, and the two gravplug directories once empty.
INSTALL   ?= install
LIBDIR     = $(PREFIX)/lib
PLUGINDIR  = $(LIBDIR)/gravplug
INCLUDEDIR = $(PREFIX)/include
GP_INCLUDEDIR = $(INCLUDEDIR)/gravplug
BINDIR     = $(PREFIX)/bin
MAN1DIR    = $(PREFIX)/share/man/man1
.PHONY: uninstall
install: $(HOSTLIB) $(PLUGINS) $(BINS)
	$(INSTALL) -d $(DESTDIR)$(GP_INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 644 $(sort $(INSTALL_HEADERS)) $(DESTDIR)$(GP_INCLUDEDIR)/
	$(INSTALL) -m 755 $(dir $(HOSTLIB))$(HOSTLIB_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(HOSTLIB_REAL) $(DESTDIR)$(LIBDIR)/$(HOSTLIB_SONAME)
	ln -sf $(HOSTLIB_SONAME) $(DESTDIR)$(LIBDIR)/libgravplug.so
	$(if $(PLUGINS),$(INSTALL) -m 755 $(PLUGINS) $(DESTDIR)$(PLUGINDIR)/)
	$(if $(BINS),$(INSTALL) -m 755 $(BINS) $(DESTDIR)$(BINDIR)/)
	$(if $(INSTALL_MAN1),$(INSTALL) -d $(DESTDIR)$(MAN1DIR) && $(INSTALL) -m 644 $(INSTALL_MAN1) $(DESTDIR)$(MAN1DIR)/)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' abi/gravplug.pc.in \
	    > $(DESTDIR)$(LIBDIR)/pkgconfig/gravplug.pc
	@echo "installed into $(DESTDIR)$(PREFIX); try: PKG_CONFIG_PATH=$(LIBDIR)/pkgconfig pkg-config --cflags --libs gravplug"

uninstall:
	rm -f $(addprefix $(DESTDIR)$(GP_INCLUDEDIR)/,$(notdir $(sort $(INSTALL_HEADERS))))
	rm -f $(DESTDIR)$(LIBDIR)/libgravplug.so $(DESTDIR)$(LIBDIR)/$(HOSTLIB_SONAME) $(DESTDIR)$(LIBDIR)/$(HOSTLIB_REAL)
	rm -f $(addprefix $(DESTDIR)$(PLUGINDIR)/,$(notdir $(PLUGINS)))
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS)))
	rm -f $(addprefix $(DESTDIR)$(MAN1DIR)/,$(notdir $(INSTALL_MAN1)))
	rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/gravplug.pc
	rmdir $(DESTDIR)$(GP_INCLUDEDIR) $(DESTDIR)$(PLUGINDIR) 2>/dev/null || true

# `make run` (the main job) is defined in host_stub/module.mk; `make demo`
# (examples/demo/module.mk) loads every plugin and prints one evaluation.

bench: all $(BENCHES)
	@echo "benchmarks built in $(BUILD)/bench; see bench/README.md"

clean:
	rm -rf $(BUILD)

# The nvcc architecture flags a build would use (empty without nvcc).
cuda-arch:
	@echo '$(strip $(CUDA_ARCH))'
