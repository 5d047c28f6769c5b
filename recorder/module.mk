# recorder/: the layer library libclrr.so (OPENCL_LAYERS / LD_PRELOAD) and
# librecctl.a (the settings table, shared with `clrr record`).
RECCTL_LIB := $(B)/lib/librecctl.a
$(RECCTL_LIB): $(call objs,recorder/controls.c)
	@mkdir -p $(@D)
	ar rcs $@ $^
ALL_TARGETS += $(RECCTL_LIB)

REC_SRCS := $(filter-out recorder/controls.c,$(wildcard recorder/*.c))
REC_OBJS := $(call objs,$(REC_SRCS)) $(B)/obj/gen/rec_gen.o
MOD_CFLAGS_recorder := -fvisibility=hidden
$(REC_OBJS): $(B)/gen/rec_gen.h
$(B)/obj/gen/rec_gen.o: CFLAGS += -fvisibility=hidden
REC_LIB := $(B)/lib/libclrr.so
# every symbol resolved at link time, except under ASan (its runtime comes
# from the executable)
REC_DEFS := $(if $(filter 1,$(SAN)),,-Wl,-z,defs)
# plan mode (rec_plan.c) links the plan matcher: libopt.a's objects that
# need no analyzer (the archive is searched, so only those are pulled in),
# the replayer's split engine (librpl.a's rpl_splitter.o, rpl_split_dev.o,
# rpl_split_adapt.o, rpl_cl.o and the API table, likewise), the cost database (libcdb.a: live runs learn from
# their split launches), and jansson, shared (Debian's libjansson.a is not
# position-independent)
$(REC_LIB): $(REC_OBJS) $(RECCTL_LIB) $(B)/lib/libopt.a $(B)/lib/librpl.a $(B)/lib/libcdb.a $(TF_LIB) \
            $(B)/gen/rec_exports.map
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -o $@ $(REC_OBJS) $(RECCTL_LIB) $(OPT_LIB) $(RPL_LIB) $(CDB_LIB) $(TF_LIB) \
	    -Wl,--version-script=$(B)/gen/rec_exports.map $(REC_DEFS) -ljansson $(RT_LIBS)
ALL_TARGETS += $(REC_LIB)
