# optimizer/: passes that turn a trace into a plan (public header
# optimizer/opt.h; the plan itself is plan/'s), archived in libopt.a. Uses
# the analyzer's model (plain C; the kernel analysis is loaded on demand)
# and jansson for JSON, which links statically like msgpack-c. Never
# linked into the layer.
OPT_SRCS := $(wildcard optimizer/*.c)
OPT_LIB := $(B)/lib/libopt.a
OPT_LIBS := -Wl,-Bstatic -ljansson -Wl,-Bdynamic

$(OPT_LIB): $(call objs,$(OPT_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(OPT_LIB)

# Unit tests of the optimizer and the plan: the plan reader/writer and the
# matcher (test_opt_plan), the passes, the pattern builder (committed
# recordings, canonical texts), the partitioner (opt_part.o and the curves
# of libcdb.a).
OPT_TEST_LIBS := $(OPT_LIB) $(MODEL_LIB) $(LIVE_LIB) $(PLAN_LIB) $(ANA_LIB) $(RPL_LIB) $(CDB_LIB)
UNIT_LIBS_test_opt_plan := $(OPT_TEST_LIBS) $(OPT_LIBS) -ldl -lm
$(B)/tests/test_opt_plan: $(OPT_TEST_LIBS)
UNIT_LIBS_test_opt_passes := $(OPT_TEST_LIBS) $(OPT_LIBS) -ldl -lm
$(B)/tests/test_opt_passes: $(OPT_TEST_LIBS) $(ANA_SO) $(B)/lib/libclrr-rw.so
UNIT_LIBS_test_opt_pattern := $(OPT_TEST_LIBS) $(OPT_LIBS) -ldl -lm
$(B)/tests/test_opt_pattern: $(OPT_TEST_LIBS)
UNIT_LIBS_test_opt_part := $(OPT_LIB) $(PLAN_LIB) $(CDB_LIB) -lm
$(B)/tests/test_opt_part: $(OPT_LIB) $(PLAN_LIB) $(CDB_LIB)
UNIT_LIBS_test_opt_wg := $(OPT_TEST_LIBS) $(OPT_LIBS) -ldl -lm
$(B)/tests/test_opt_wg: $(OPT_TEST_LIBS)
