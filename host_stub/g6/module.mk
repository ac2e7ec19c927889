# SPDX-License-Identifier: Apache-2.0
# host_stub/g6 — libgravplug-g6: the GRAPE-6 library's calls (g6_open_,
# g6calc_lasthalf_, ...) on any plugin, for the collisional codes that
# link Sapporo or GRAPE-6 (docs/GRAPE6.md). A host: it reaches plugins
# through the loader alone. The static archive carries the loader, so a
# client links it with -ldl -lm and nothing else; both libraries export the
# names of g6.syms alone (one relocatable object, the rest localized).
G6_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard host_stub/g6/*.c))
G6_COMBINED := $(BUILD)/obj/host_stub/g6/gravplug-g6.o
G6_STATIC := $(BUILD)/lib/libgravplug-g6.a
G6_SHARED := $(BUILD)/lib/libgravplug-g6.so
LIBS += $(G6_STATIC) $(G6_SHARED)
INSTALL_HEADERS += host_stub/g6/g6.h
$(G6_OBJS): CFLAGS += $(NO_TRUNCATION_WARNING)

$(G6_COMBINED): $(G6_OBJS) $(GP_LOADER_OBJ) host_stub/g6/g6.syms
	$(CC) -r -nostdlib -o $@ $(G6_OBJS) $(GP_LOADER_OBJ)
	objcopy --keep-global-symbols=host_stub/g6/g6.syms $@
$(G6_STATIC): $(G6_COMBINED)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $<
$(G6_SHARED): $(G6_COMBINED)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,--no-undefined $(LDFLAGS) -o $@ $< -ldl -lm

.PHONY: g6 install-g6 uninstall-g6
g6: $(G6_STATIC) $(G6_SHARED)
install: install-g6
uninstall: uninstall-g6
install-g6: $(G6_STATIC) $(G6_SHARED)
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/pkgconfig
	$(INSTALL) -m 644 $(G6_STATIC) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 755 $(G6_SHARED) $(DESTDIR)$(LIBDIR)/
	for pc in gravplug-g6 sapporo_light; do \
	    sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' host_stub/g6/$$pc.pc.in \
	        > $(DESTDIR)$(LIBDIR)/pkgconfig/$$pc.pc || exit 1; done
uninstall-g6:
	rm -f $(DESTDIR)$(LIBDIR)/libgravplug-g6.a $(DESTDIR)$(LIBDIR)/libgravplug-g6.so
	rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/gravplug-g6.pc $(DESTDIR)$(LIBDIR)/pkgconfig/sapporo_light.pc
