# tests/stub-icd/: the stub OpenCL driver, an ICD that logs every call it
# receives (the replayer's test oracle; see stub_icd.c), and a vendors
# folder that makes ocl-icd load it and nothing else:
#   OCL_ICD_VENDORS=$PWD/build/stub-vendors ./app
STUB_SRCS := $(wildcard tests/stub-icd/stub_*.c)
STUB_OBJS := $(call objs,$(STUB_SRCS))
STUB_LIB := $(B)/lib/libclrrstub.so
STUB_ICD := $(B)/stub-vendors/clrrstub.icd
# only the four symbols ocl-icd looks up are exported (STUB_EXPORT)
$(STUB_OBJS): CFLAGS += -fvisibility=hidden
# every symbol resolved at link time, except under ASan (its runtime comes
# from the executable)
STUB_DEFS := $(if $(filter 1,$(SAN)),,-Wl,-z,defs)
$(STUB_LIB): $(STUB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -o $@ $(STUB_OBJS) $(STUB_DEFS)
$(STUB_ICD): $(STUB_LIB)
	@mkdir -p $(@D)
	echo "$(abspath $(STUB_LIB))" >$@
ALL_TARGETS += $(STUB_LIB) $(STUB_ICD)
