# recorder/: the layer library libclrr.so (OPENCL_LAYERS / LD_PRELOAD) and
# librecctl.a (the settings table, shared with `clrr record`).
RECCTL_LIB := $(B)/lib/librecctl.a
$(RECCTL_LIB): $(call objs,recorder/controls.c)
	@mkdir -p $(@D)
	ar rcs $@ $^
ALL_TARGETS += $(RECCTL_LIB)
