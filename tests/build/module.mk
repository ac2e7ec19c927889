# SPDX-License-Identifier: Apache-2.0
# tests/build: the build and the tree as a whole: make install into a
# prefix, the CUDA architectures, the version in one place, the license
# headers, the README's first command and the demo example.
BUILD_SH_TESTS := build-install build-cuda-arch version-agree license-headers readme-first-command examples-demo
TESTS += $(BUILD_SH_TESTS:%=$(BUILD)/t/%.t)
$(BUILD)/t/build-install.t: $(HOSTLIB) $(PLUGINS) $(BINS)
$(BUILD)/t/version-agree.t: $(BINS) $(BUILD)/plugins/gravplug-cpu-direct.so VERSION
$(BUILD)/t/build-cuda-arch.t: $(CUDA_PLUGINS_BUILT)
$(BUILD)/t/examples-demo.t: $(GP_DEMO) $(PLUGINS)
$(BUILD_SH_TESTS:%=$(BUILD)/t/%.t): $(BUILD)/t/%.t: tests/build/%.sh tests/tap-lib.sh tests/build/module.mk
	$(gp_sh_test)
