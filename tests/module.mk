# tests/: CUnit unit tests (one binary per tests/unit/test_*.c), the
# workload applications (tests/apps/module.mk), the stub OpenCL driver
# (tests/stub-icd/module.mk) and end-to-end scripts.
include tests/apps/module.mk
include tests/stub-icd/module.mk
include tests/fuzz/module.mk
include tests/suites/module.mk

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRCS))

# Extra link inputs per unit test binary: UNIT_LIBS_<name> (set by modules).
$(B)/tests/test_%: $(B)/obj/tests/unit/test_%.o $(TF_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(UNIT_LIBS_test_$*) $(TF_LIB) -lcunit $(RT_LIBS) -lOpenCL
# The comparison tests link the replay engine (only rpl_compare.o is pulled in).
UNIT_LIBS_test_rpl_compare := $(RPL_LIB)
$(B)/tests/test_rpl_compare: $(RPL_LIB)
# The refinement tests link the split engine's arithmetic (rpl_splitter.o
# pulls in rpl_cl.o, the API table and the cost database).
UNIT_LIBS_test_rpl_lanes := $(RPL_LIB)
$(B)/tests/test_rpl_lanes: $(RPL_LIB)
UNIT_LIBS_test_rpl_refine := $(RPL_LIB) $(CDB_LIB)
$(B)/tests/test_rpl_refine: $(RPL_LIB) $(CDB_LIB)
# The graph tests link the analyzer (model, graph, statistics, exports).
UNIT_LIBS_test_ana_graph := $(ANA_LIB) $(ANA_LIBS)
$(B)/tests/test_ana_graph: $(ANA_LIB)
# The cost database tests link the cost database only.
UNIT_LIBS_test_cdb := $(CDB_LIB)
$(B)/tests/test_cdb: $(CDB_LIB)

ALL_TARGETS += $(UNIT_BINS)

# Test jobs for tests/run.sh: BUILD_DIR:PATH[:san]. FUZZ_BINS
# (tests/fuzz/module.mk): fuzz targets built as plain programs that run
# their corpus and every crash ever found.
E2E_SCRIPTS := $(sort $(filter-out tests/e2e/lib.sh tests/e2e/run.sh,$(wildcard tests/e2e/*.sh)))
unit_jobs = $(foreach t,$(patsubst $(B)/%,%,$(UNIT_BINS) $(FUZZ_BINS)),$(1):$(1)/$(t))
e2e_jobs = $(foreach s,$(E2E_SCRIPTS),$(1):$(s)$(2))
# `make test` (Makefile): both flavours in one pool
TEST_JOBS = $(call unit_jobs,$(B)) $(call e2e_jobs,$(B)) \
            $(call unit_jobs,$(SAN_B)) $(call e2e_jobs,$(SAN_B),:san)

# One suite of one flavour: `make test-unit`, `make SAN=1 test-e2e-san`, ...
test-unit: $(UNIT_BINS) $(FUZZ_BINS)
	@bash tests/run.sh -t unit $(call unit_jobs,$(B))
test-e2e: all
	@bash tests/run.sh -t e2e $(call e2e_jobs,$(B))
test-e2e-san: all
	@bash tests/run.sh -t e2e $(call e2e_jobs,$(B),:san)

# Small OpenCL programs the end-to-end tests drive (tests/progs/*.c).
PROG_SRCS := $(wildcard tests/progs/*.c)
PROG_BINS := $(patsubst tests/progs/%.c,$(B)/tests/progs/%,$(PROG_SRCS))
$(B)/tests/progs/%: $(B)/obj/tests/progs/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -lOpenCL -lm
ALL_TARGETS += $(PROG_BINS)

# LD_PRELOAD shims some end-to-end tests use to widen a race window
# (tests/shims/*.c, one shared object each; plain build only: ASan's
# runtime must come first).
SHIM_SRCS := $(wildcard tests/shims/*.c)
SHIM_LIBS := $(patsubst tests/shims/%.c,$(B)/tests/shims/%.so,$(SHIM_SRCS))
$(B)/tests/shims/%.so: tests/shims/%.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -fsanitize=%,$(CFLAGS)) -fPIC -shared -o $@ $< -ldl
ALL_TARGETS += $(SHIM_LIBS)

# Longer runs than CI needs: 100 random SIGKILLs of a recording, and the
# full third-party suites (LONG_E2E, from tests/suites/module.mk).
test-long: all
	@CLRR_KILLS=100 CLRR_LONG=1 bash tests/e2e/run.sh $(B) tests/e2e/record_sigkill.sh $(LONG_E2E)
