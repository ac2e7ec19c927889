# SPDX-License-Identifier: Apache-2.0
# tests/: the TAP suite, one sub-folder per thing tested (tests/README.md
# lists them). Each sub-folder's module.mk builds its tests into
# executable TAP producers build/t/NAME.t and adds them to TESTS; the code
# folders' module.mk files build code only. The Makefile reads this file
# after every code folder's, so every object and program list is complete
# here; the sub-folders are read in the order below, each after those whose
# variables its rules' prerequisites name (fixtures first, then the CUDA
# emulation gpu/ builds, then the conformance program).

# A shell TAP script as the whole recipe of build/t/NAME.t: the script
# ($<) with @ROOT@, @BUILD@ and @MAKE@ filled in.
define gp_sh_test
	@mkdir -p $(dir $@)
	@sed -e 's|@ROOT@|$(abspath .)|g' -e 's|@BUILD@|$(abspath $(BUILD))|g' \
	     -e 's|@MAKE@|$(MAKE)|g' $< > $@
	@chmod +x $@
endef

GP_TEST_MODULES := fixtures gpu conformance plugin/base plugin/cpu-direct plugin/cpu-tree plugin/octree \
                   lib integrators gravhost mpi python build fuzz
include $(GP_TEST_MODULES:%=tests/%/module.mk)

# ---- the house's layering: each folder uses only the folders its row of
# tests/layering.py's table allows, and no two modules include or call each
# other in a loop (it reads the includes and `nm` of the build's objects)
TESTS += $(BUILD)/t/layering.t
$(BUILD)/t/layering.t: tests/layering.py tests/module.mk
	@mkdir -p $(dir $@)
	@printf '#!/bin/sh\ncd "%s" && exec python3 tests/layering.py "%s"\n' '$(abspath .)' '$(abspath $(BUILD))' > $@
	@chmod +x $@
