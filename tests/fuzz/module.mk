# tests/fuzz/: libFuzzer targets for every parser of untrusted input
# (tests/fuzz/README.md): fuzz_trace (the trace reader), fuzz_replay
# (replay of a decoded trace onto the stub driver), fuzz_replay_pocl (the
# same onto the machine's own driver, PoCL), fuzz_plan (the plan reader),
# fuzz_costs (the cost database reader).
# FUZZ_BINS: each target built as a plain program that runs its corpus and
# every crash ever found (make test-unit runs them, in both builds);
# `make fuzz FUZZ_SECONDS=N` builds each target with libFuzzer (clang,
# ASan+UBSan, into $(B)/fuzz/) and runs it N seconds.
FUZZ_TARGETS := trace replay plan costs replay_pocl
FUZZ_SECONDS ?= 60
FUZZ_MERGE ?= 0
FUZZ_STUB_DIR := $(abspath $(dir $(STUB_ICD)))
FUZZ_DEFS := -DFUZZ_ROOT='"$(CURDIR)"' -DFUZZ_STUB_VENDORS='"$(FUZZ_STUB_DIR:%/=%)"'

FUZZ_LDLIBS := $(RT_LIBS) -lOpenCL

# ------------------------------------------------ plain programs ($(B)/tests)
$(B)/obj/tests/fuzz/%.o: CPPFLAGS += $(FUZZ_DEFS)
FUZZ_BINS := $(patsubst %,$(B)/tests/fuzz_%,$(FUZZ_TARGETS))
$(B)/tests/fuzz_%: $(B)/obj/tests/fuzz/fuzz_%.o $(B)/obj/tests/fuzz/fuzz_input.o $(B)/obj/tests/fuzz/fuzz_main.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(FUZZ_LDLIBS)
$(B)/tests/fuzz_trace: $(TF_LIB)
# the replay engine links the cost database (cost learning, rpl_profile.c)
$(B)/tests/fuzz_replay: $(RPL_LIB) $(CDB_LIB) $(TF_LIB) | $(STUB_ICD)
# the same target on the machine's own driver (fuzz_replay_pocl.c includes fuzz_replay.c)
$(B)/tests/fuzz_replay_pocl: $(RPL_LIB) $(CDB_LIB) $(TF_LIB)
$(B)/tests/fuzz_plan: $(OPT_LIB) $(LIVE_LIB) $(PLAN_LIB) $(ANA_LIB) $(RPL_LIB) $(CDB_LIB) $(TF_LIB)
$(B)/tests/fuzz_plan: FUZZ_LDLIBS += $(OPT_LIBS)
$(B)/tests/fuzz_costs: $(CDB_LIB)
# fuzz-pack: traces to fuzz inputs and back, resealing (seeds.sh, tests/corrupt/make.py)
$(B)/tests/fuzz-pack: $(B)/obj/tests/fuzz/fuzz_pack.o $(B)/obj/tests/fuzz/fuzz_input.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(RT_LIBS)
ALL_TARGETS += $(FUZZ_BINS) $(B)/tests/fuzz-pack

# ------------------------------------------------ libFuzzer builds ($(B)/fuzz)
# Everything a target reaches is compiled again with clang, coverage
# instrumentation and ASan+UBSan, whatever CC and SAN are.
FUZZ_DIR := $(B)/fuzz
FUZZ_CC := clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -O1 -g -std=c11 -fPIC $(WARN) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -pthread
# (the API description's table, api_sem.c, is archived in libtf.a: trace-format/module.mk)
FUZZ_TF_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(TF_SRCS)) $(FUZZ_DIR)/obj/gen/api_sem.o
FUZZ_RPL_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(RPL_SRCS)) $(FUZZ_DIR)/obj/gen/rpl_gen.o \
                 $(FUZZ_DIR)/obj/gen/rpl_gen_api.o
FUZZ_OPT_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(OPT_SRCS) $(PLAN_SRCS) $(LIVE_MATCH_SRCS))
FUZZ_CDB_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard costs/*.c))
FUZZ_LF_BINS := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_TARGETS))
# the stub driver again, with ASan+UBSan (no coverage: it is not the
# target), so that a leak or overflow in it has a whole stack
FUZZ_STUB_OBJS := $(patsubst %.c,$(FUZZ_DIR)/stub/%.o,$(STUB_SRCS))
FUZZ_STUB_ICD := $(FUZZ_DIR)/stub-vendors/clrrstub.icd
FUZZ_LF_DEFS := -DFUZZ_ROOT='"$(CURDIR)"' -DFUZZ_STUB_VENDORS='"$(abspath $(FUZZ_DIR))/stub-vendors"'

$(FUZZ_DIR)/obj/%.o: %.c $(DEPS_STAMP) | $(B)/gen/.stamp
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_LF_DEFS) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
# XXH3 for AVX2, as in trace-format/module.mk
$(FUZZ_DIR)/obj/trace-format/tf_hash_avx2.o: FUZZ_CFLAGS += -mavx2
$(FUZZ_DIR)/stub/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) -O1 -g -std=c11 -fPIC $(WARN) $(FUZZ_SAN) -fvisibility=hidden -pthread -MMD -MP -c $< -o $@
$(FUZZ_DIR)/lib/libclrrstub.so: $(FUZZ_STUB_OBJS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_SAN) -pthread -shared -o $@ $^
$(FUZZ_STUB_ICD): $(FUZZ_DIR)/lib/libclrrstub.so
	@mkdir -p $(@D)
	echo "$(abspath $<)" >$@
$(FUZZ_DIR)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
$(FUZZ_RPL_OBJS): $(B)/gen/rpl_gen.h

$(FUZZ_LF_BINS): $(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/obj/tests/fuzz/fuzz_input.o
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -pthread -o $@ $^ $(FUZZ_LDLIBS)
$(FUZZ_DIR)/fuzz_trace: $(FUZZ_TF_OBJS)
$(FUZZ_DIR)/fuzz_replay: $(FUZZ_RPL_OBJS) $(FUZZ_TF_OBJS) $(CDB_LIB) | $(FUZZ_STUB_ICD)
$(FUZZ_DIR)/fuzz_replay_pocl: $(FUZZ_RPL_OBJS) $(FUZZ_TF_OBJS) $(CDB_LIB)
# the plan reader, with the rest of the optimizer (archives: only what it reaches)
$(FUZZ_DIR)/fuzz_plan: $(FUZZ_OPT_OBJS) $(ANA_LIB) $(RPL_LIB) $(CDB_LIB) $(TF_LIB)
$(FUZZ_DIR)/fuzz_plan: FUZZ_LDLIBS := $(OPT_LIBS) $(FUZZ_LDLIBS) -ldl

$(FUZZ_DIR)/fuzz_costs: $(FUZZ_CDB_OBJS)

fuzz: $(FUZZ_LF_BINS) $(FUZZ_STUB_ICD)
	@bash tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_MERGE) $(FUZZ_TARGETS)

-include $(shell find $(FUZZ_DIR)/obj $(FUZZ_DIR)/stub -name '*.d' 2>/dev/null)
