# clrr — top-level, non-recursive Makefile. Each module adds its rules in
# its own module.mk. Everything is built under $(B) (build/ by default;
# build-san/ for `make SAN=1`, the ASan+UBSan flavour built with clang).
.DEFAULT_GOAL := all
SHELL := /bin/bash

SAN ?= 0
ifeq ($(SAN),1)
B ?= build-san
CC := clang
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
B ?= build
CC ?= gcc
SANFLAGS :=
endif

VERSION := 0.1.0
LLVM_CONFIG ?= /usr/lib/llvm-16/bin/llvm-config
LLVM_INC := $(shell $(LLVM_CONFIG) --includedir 2>/dev/null)
LLVM_LIB := $(shell $(LLVM_CONFIG) --libdir 2>/dev/null)
WARN := -Wall -Wextra -Werror -Wno-deprecated-declarations
CPPFLAGS += -D_GNU_SOURCE -DCL_TARGET_OPENCL_VERSION=300 -DCLRR_VERSION='"$(VERSION)"' \
            -I. -I$(B)/gen
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -fPIC $(WARN) $(SANFLAGS) -pthread
LDFLAGS += $(SANFLAGS) -pthread
# Runtime pieces (layer, clrr without analyzer) link msgpack-c and xxhash
# statically so they run on machines without our -dev packages; zstd's
# archive is not PIC, and libzstd1 is present on every Debian/Ubuntu system.
RT_LIBS := -Wl,-Bstatic -lmsgpackc -lxxhash -Wl,-Bdynamic -lzstd -ldl -lm

# ------------------------------------------------------------------ deps
# Debian packages the project needs; installed when missing.
DEB_PKGS := build-essential ocl-icd-opencl-dev opencl-headers pocl-opencl-icd \
            clinfo libzstd-dev libmsgpack-dev libxxhash-dev libcunit1-dev \
            llvm-16-dev libclang-16-dev clang-16 clang oclgrind graphviz \
            python3 python3-pyopencl zstd libjansson-dev \
            piglit python3-pytest python-pyopencl-doc libclang-rt-16-dev
DEPS_STAMP := $(B)/.deps-ok
deps: $(DEPS_STAMP)
$(DEPS_STAMP): Makefile
	@missing=$$(for p in $(DEB_PKGS); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing:" $$missing; \
	    SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@mkdir -p $(@D) && touch $@

# --------------------------------------------------------------- helpers
# $(call objs,SRCS) -> object paths under $(B)/obj
objs = $(patsubst %.c,$(B)/obj/%.o,$(1))

$(B)/obj/%.o: %.c $(DEPS_STAMP) | $(B)/gen/.stamp
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(MOD_CFLAGS_$(firstword $(subst /, ,$<))) -MMD -MP -c $< -o $@

$(B)/gen/.stamp:
	@mkdir -p $(@D) && touch $@

ALL_TARGETS :=
# keep objects made through chained pattern rules
.SECONDARY:
include trace-format/module.mk
include recorder/module.mk
include replayer/module.mk
include analyzer/module.mk
include optimizer/module.mk
include rewriter/module.mk
include tools/module.mk
include tests/module.mk
include bench/module.mk

all: $(ALL_TARGETS)

# --------------------------------------------------------------- targets
.PHONY: all deps test test-unit test-e2e test-san test-long demo bench fuzz clean install

# `make test`: unit and end-to-end tests, then again under ASan+UBSan.
test: all
	@$(MAKE) --no-print-directory test-unit test-e2e
	@$(MAKE) --no-print-directory SAN=1 test-unit test-e2e-san
	@echo "make test: all suites passed"

demo: all
	@bash tools/demo.sh $(B)

PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(B)/bin/clrr $(DESTDIR)$(PREFIX)/bin/clrr
	install -m 755 $(B)/lib/libclrr.so $(DESTDIR)$(PREFIX)/lib/libclrr.so
	install -m 755 $(B)/lib/libclrr-ana.so $(DESTDIR)$(PREFIX)/lib/libclrr-ana.so
	install -m 755 $(B)/lib/libclrr-rw.so $(DESTDIR)$(PREFIX)/lib/libclrr-rw.so

clean:
	rm -rf build build-san

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
