# tests/apps/: the workload applications. Each tests/apps/NAME.c is one
# self-contained OpenCL host program (kernels embedded) built as $(B)/apps/NAME.
APP_SRCS := $(wildcard tests/apps/*.c)
APP_BINS := $(patsubst tests/apps/%.c,$(B)/apps/%,$(APP_SRCS))

$(B)/apps/%: $(B)/obj/tests/apps/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -lOpenCL -lm

ALL_TARGETS += $(APP_BINS)
