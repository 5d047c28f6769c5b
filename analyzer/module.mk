# analyzer/: offline analysis of traces (public header analyzer/ana.h).
#  - analyzer/ana_llvm_*.c: the Clang/LLVM part of the kernel analysis, built
#    as the shared object $(B)/lib/libclrr-ana.so (links libLLVM-16), which
#    `clrr` loads with dlopen on first use; nothing else links LLVM.
#  - every other analyzer/*.c: plain C (trace model, graph, statistics,
#    timeline, region evaluation), archived in libana.a and linked into clrr.
LLVM_CFLAGS := $(shell $(LLVM_CONFIG) --cflags 2>/dev/null | tr ' ' '\n' | grep -E '^-(I|D)' | tr '\n' ' ')
ANA_LLVM_SRCS := $(wildcard analyzer/ana_llvm_*.c)
ANA_SRCS := $(filter-out $(ANA_LLVM_SRCS),$(wildcard analyzer/*.c))
ANA_LIB := $(B)/lib/libana.a
ANA_SO := $(B)/lib/libclrr-ana.so
MOD_CFLAGS_analyzer := $(LLVM_CFLAGS)

$(ANA_LIB): $(call objs,$(ANA_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(ANA_SO): $(call objs,$(ANA_LLVM_SRCS))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -o $@ $^ -L$(LLVM_LIB) -lLLVM-16 -Wl,-rpath,$(LLVM_LIB)

ALL_TARGETS += $(ANA_LIB) $(if $(ANA_LLVM_SRCS),$(ANA_SO))
