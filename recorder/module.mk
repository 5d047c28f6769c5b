# recorder/: the recording layer's objects (REC_OBJS, linked into
# libclrr.so by the top-level Makefile, with live/'s plan mode, which the
# recorder reaches only through its hook table, recorder/rec.h) and
# librecctl.a (the settings table, shared with `clrr record`). The recorder
# depends on trace-format alone.
RECCTL_LIB := $(B)/lib/librecctl.a
$(RECCTL_LIB): $(call objs,recorder/controls.c)
	@mkdir -p $(@D)
	ar rcs $@ $^
ALL_TARGETS += $(RECCTL_LIB)

REC_SRCS := $(filter-out recorder/controls.c,$(wildcard recorder/*.c))
REC_OBJS := $(call objs,$(REC_SRCS)) $(B)/obj/gen/rec_gen.o
MOD_CFLAGS_recorder := -fvisibility=hidden
$(REC_OBJS) $(call objs,recorder/controls.c): $(B)/gen/rec_gen.h
$(B)/obj/gen/rec_gen.o: CFLAGS += -fvisibility=hidden
