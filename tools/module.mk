# tools/: the `clrr` command (tools/clrr/, one file per subcommand) and the
# code generator (tools/gen/), which produces build/gen/ from the OpenCL
# headers and recorder/api.overlay.
MOD_CFLAGS_tools := -I$(LLVM_INC)

GEN_SRCS := $(wildcard tools/gen/*.c)
GEN_BIN := $(B)/bin/clrr-gen
$(GEN_BIN): $(call objs,$(GEN_SRCS))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -L$(LLVM_LIB) -lclang -Wl,-rpath,$(LLVM_LIB)

GEN_OUT := $(B)/gen/rec_gen.h $(B)/gen/rec_gen.c $(B)/gen/rec_exports.map $(B)/gen/cl_names.c \
           $(B)/gen/rpl_gen.h $(B)/gen/rpl_gen.c $(B)/gen/rpl_gen_api.c \
           $(B)/gen/api_sem.h $(B)/gen/api_sem.c
$(GEN_OUT) &: $(GEN_BIN) recorder/api.overlay tools/gen/api_tu.h
	@mkdir -p $(B)/gen
	ASAN_OPTIONS=detect_leaks=0 $(GEN_BIN) recorder/api.overlay $(B)/gen tools/gen/api_tu.h \
	    -x c -DCL_TARGET_OPENCL_VERSION=300 -I$(LLVM_LIB)/clang/16/include

# -MMD: the generated entry points include recorder/rec_int.h and the other
# modules' headers; without dependency files a header change left rec_gen.o
# compiled against the old layout of rec_call (found when the layer took its
# plan-mode path in a plain recording, reading a field at the wrong offset)
$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The call semantics (build/gen/api_sem.{c,h}: categories, operations,
# memory effects, wait lists, what a plan may drop) sit at the bottom of the
# stack beside trace-format: api_sem.o is archived in libtf.a, which every
# program and library links, and api_sem.h includes nothing of ours. The
# modules that read it need the header before they compile.
$(TF_LIB): $(B)/obj/gen/api_sem.o
$(call objs,$(wildcard analyzer/*.c optimizer/*.c plan/*.c live/*.c replayer/*.c recorder/*.c tools/clrr/*.c tests/unit/*.c)): \
    $(B)/gen/api_sem.h

CLI_SRCS := $(wildcard tools/clrr/*.c)
CLI_OBJS := $(call objs,$(CLI_SRCS)) $(B)/obj/gen/cl_names.o
$(CLI_OBJS): $(B)/gen/rec_gen.h
$(B)/bin/clrr: $(CLI_OBJS) $(OPT_LIB) $(LIVE_LIB) $(PLAN_LIB) $(ANA_LIB) $(RPL_LIB) $(CDB_LIB) $(TF_LIB) $(RECCTL_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(OPT_LIB) $(LIVE_LIB) $(PLAN_LIB) $(ANA_LIB) $(RPL_LIB) $(CDB_LIB) $(TF_LIB) $(RECCTL_LIB) $(OPT_LIBS) $(RT_LIBS) -lOpenCL
ALL_TARGETS += $(B)/bin/clrr

# `make docs`: docs/commands.md, the command reference, from the usage
# strings of the built `clrr` (tests/e2e/cli_docs.sh checks it is current).
.PHONY: docs
docs: $(B)/bin/clrr
	bash tools/cli_docs.sh $(B)/bin/clrr >docs/commands.md.tmp && mv docs/commands.md.tmp docs/commands.md

# Manual pages (build/man/clrr.1, clrr-COMMAND.1) and bash completion
# (build/completion/clrr), made from the same usage strings by
# tools/cli_ref.py at build time; never committed. `make install` installs
# them (tests/e2e/cli_man.sh checks they render and list every option).
CLI_MAN_STAMP := $(B)/man/.stamp
$(CLI_MAN_STAMP): $(B)/bin/clrr tools/cli_ref.py docs/environment.md
	@rm -rf $(B)/man && mkdir -p $(B)/man
	python3 tools/cli_ref.py man $(B)/bin/clrr $(B)/man docs/environment.md && touch $@
$(B)/completion/clrr: $(B)/bin/clrr tools/cli_ref.py
	python3 tools/cli_ref.py completion $(B)/bin/clrr $@
ALL_TARGETS += $(CLI_MAN_STAMP) $(B)/completion/clrr
