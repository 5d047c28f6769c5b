# optimizer/: passes that turn a trace into a plan, the plan file (reader
# and writer, optimizer/PLAN.md) and the matcher that applies a plan to a
# run (public header optimizer/opt.h), archived in libopt.a. Uses the
# analyzer's model (plain C; the kernel analysis is loaded on demand) and
# jansson for JSON, which links statically like msgpack-c.
OPT_SRCS := $(wildcard optimizer/*.c)
OPT_LIB := $(B)/lib/libopt.a
OPT_LIBS := -Wl,-Bstatic -ljansson -Wl,-Bdynamic

$(OPT_LIB): $(call objs,$(OPT_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(OPT_LIB)

# Unit tests of the optimizer: the plan reader/writer and the passes.
UNIT_LIBS_test_opt_plan := $(OPT_LIB) $(ANA_LIB) $(CDB_LIB) $(OPT_LIBS) -ldl -lm
$(B)/tests/test_opt_plan: $(OPT_LIB) $(ANA_LIB) $(CDB_LIB)
UNIT_LIBS_test_opt_passes := $(OPT_LIB) $(ANA_LIB) $(CDB_LIB) $(OPT_LIBS) -ldl -lm
$(B)/tests/test_opt_passes: $(OPT_LIB) $(ANA_LIB) $(CDB_LIB) $(ANA_SO) $(B)/lib/libclrr-rw.so
# The pattern builder's tests (committed recordings, canonical texts).
UNIT_LIBS_test_opt_pattern := $(OPT_LIB) $(ANA_LIB) $(CDB_LIB) $(OPT_LIBS) -ldl -lm
$(B)/tests/test_opt_pattern: $(OPT_LIB) $(ANA_LIB) $(CDB_LIB)
# The partitioner's tests (opt_part.o and the curves of libcdb.a).
UNIT_LIBS_test_opt_part := $(OPT_LIB) $(CDB_LIB) -lm
$(B)/tests/test_opt_part: $(OPT_LIB) $(CDB_LIB)
