# costs/: the per-machine cost database (static archive libcdb.a; cdb.h,
# file format in costs/COSTS.md). Plain C and libc: no OpenCL, no LLVM, so
# the runtime pieces and the optimizer can all link it.
CDB_SRCS := $(wildcard costs/*.c)
CDB_OBJS := $(call objs,$(CDB_SRCS))
CDB_LIB  := $(B)/lib/libcdb.a

$(CDB_LIB): $(CDB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^

ALL_TARGETS += $(CDB_LIB)
