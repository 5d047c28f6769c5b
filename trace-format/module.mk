# trace-format/: the trace container library (static archive).
TF_SRCS := $(wildcard trace-format/*.c)
TF_OBJS := $(call objs,$(TF_SRCS))
# XXH3 for AVX2, chosen at run time (tf_hash_avx2.c)
$(B)/obj/trace-format/tf_hash_avx2.o: CFLAGS += -mavx2
TF_LIB  := $(B)/lib/libtf.a

$(TF_LIB): $(TF_OBJS)
	@mkdir -p $(@D)
	ar rcs $@ $^

ALL_TARGETS += $(TF_LIB)
