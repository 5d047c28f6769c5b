# plan/: the plan module (public header plan/plan.h, format plan/PLAN.md):
# the plan file's reader and writer, the plan's contents, patterns and the
# call tracker, archived in libplan.a. Plain C on trace-format/ and jansson
# (shared in the layer: Debian's libjansson.a is not position-independent;
# static in clrr): no OpenCL, no LLVM. The layer (libclrr.so) links every
# object of it; clrr and the tests link the archive.
PLAN_SRCS := $(wildcard plan/*.c)
PLAN_OBJS := $(call objs,$(PLAN_SRCS))
PLAN_LIB := $(B)/lib/libplan.a

$(PLAN_LIB): $(PLAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(PLAN_LIB)

# The trust record and the comparison of generated kernels (plan_trust.c).
UNIT_LIBS_test_plan_trust := $(PLAN_LIB) -Wl,-Bstatic -ljansson -Wl,-Bdynamic
$(B)/tests/test_plan_trust: $(PLAN_LIB)
