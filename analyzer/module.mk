# analyzer/: offline analysis of traces (public header analyzer/ana.h).
#  - analyzer/ana_llvm_*.c: the Clang/LLVM part of the kernel analysis, built
#    as the shared object $(B)/lib/libclrr-ana.so (links libLLVM-16), which
#    `clrr` loads with dlopen on first use; nothing else links LLVM. It runs
#    the clang-16 binary found at build time (ANA_CLANG_PATH) as a
#    subprocess and exports only ana_llvm_analyze.
#  - every other analyzer/*.c: plain C (trace model, graph, statistics,
#    timeline, region evaluation), archived in libana.a and linked into clrr;
#    its JSON strings go through jansson (ANA_LIBS for what links it).
#    ana_expr.c (affine-form arithmetic) goes into both.
ANA_LLVM_SRCS := $(wildcard analyzer/ana_llvm_*.c)
ANA_SRCS := $(filter-out $(ANA_LLVM_SRCS),$(wildcard analyzer/*.c))
ANA_LIB := $(B)/lib/libana.a
# the exports write JSON strings through jansson (ana_json.c), statically
# as in clrr
ANA_LIBS := -Wl,-Bstatic -ljansson -Wl,-Bdynamic
ANA_SO := $(B)/lib/libclrr-ana.so
ANA_SO_MAP := $(B)/gen/ana_llvm.map
MOD_CFLAGS_analyzer := $(LLVM_CFLAGS)

$(call objs,$(ANA_LLVM_SRCS)): CPPFLAGS += -DANA_CLANG_PATH='"$(LLVM_BINDIR)/clang"'

$(ANA_LIB): $(call objs,$(ANA_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(ANA_SO_MAP): analyzer/module.mk | $(B)/gen/.stamp
	echo '{ global: ana_llvm_analyze; local: *; };' > $@

$(ANA_SO): $(call objs,$(ANA_LLVM_SRCS) analyzer/ana_expr.c) $(ANA_SO_MAP)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -o $@ $(filter %.o,$^) -Wl,--version-script=$(ANA_SO_MAP) \
	    -L$(LLVM_LIB) -lLLVM-16 -Wl,-rpath,$(LLVM_LIB)

ALL_TARGETS += $(ANA_LIB) $(if $(ANA_LLVM_SRCS),$(ANA_SO))

# Kernel-analysis unit test: the plain part, dlopen of the .so, and the
# workload kernels (the same generated headers the applications include).
UNIT_LIBS_test_ana_kernel := $(ANA_LIB) $(ANA_LIBS) -ldl -lm
$(B)/tests/test_ana_kernel: $(ANA_LIB) $(ANA_SO)
$(B)/obj/tests/unit/test_ana_kernel.o: \
    $(patsubst tests/apps/%.cl,$(B)/gen/apps/%_cl.h,$(wildcard tests/apps/*.cl))
