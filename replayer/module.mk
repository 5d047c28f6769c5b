# replayer/: the replay engine (static archive librpl.a): hand-written
# replayer/*.c plus the call table generated from the API description
# (build/gen/rpl_gen.c). Links the OpenCL ICD loader, never LLVM.
RPL_SRCS := $(wildcard replayer/*.c)
RPL_OBJS := $(call objs,$(RPL_SRCS)) $(B)/obj/gen/rpl_gen.o $(B)/obj/gen/rpl_gen_api.o
$(RPL_OBJS): $(B)/gen/rpl_gen.h
RPL_LIB  := $(B)/lib/librpl.a

$(RPL_LIB): $(RPL_OBJS)
	@mkdir -p $(@D)
	ar rcs $@ $^

ALL_TARGETS += $(RPL_LIB)
