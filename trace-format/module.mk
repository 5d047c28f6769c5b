# trace-format/: the trace container library (static archive).
TF_SRCS := $(wildcard trace-format/*.c)
TF_OBJS := $(call objs,$(TF_SRCS))
TF_LIB  := $(B)/lib/libtf.a

$(TF_LIB): $(TF_OBJS)
	@mkdir -p $(@D)
	ar rcs $@ $^

ALL_TARGETS += $(TF_LIB)
