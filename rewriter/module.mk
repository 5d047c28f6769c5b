# rewriter/: OpenCL C source rewriting with the libclang C API (public
# header rewriter/rw.h; rewriter/README.md): vertical kernel fusion,
# partition-ready kernels and specialized kernels.
# Archived in librw.a; whatever links it links libclang (RW_LIBS). The
# parse finds OpenCL's default header in clang's resource directory, which
# libclang (installed apart from it on Debian) does not find by itself.
RW_SRCS := $(wildcard rewriter/*.c)
RW_LIB := $(B)/lib/librw.a
RW_LIBS := -L$(LLVM_LIB) -lclang -Wl,-rpath,$(LLVM_LIB)
RW_RESOURCE_DIR := $(or $(shell $(LLVM_BINDIR)/clang -print-resource-dir 2>/dev/null),$(LLVM_LIB)/clang/16)
MOD_CFLAGS_rewriter := -I$(LLVM_INC)

$(call objs,$(RW_SRCS)): CPPFLAGS += -DRW_CLANG_INCLUDE='"$(RW_RESOURCE_DIR)/include"'

$(RW_LIB): $(call objs,$(RW_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(RW_LIB)

# libclrr-rw.so: the same objects as a shared object exporting rw.h, which
# the optimizer opens with dlopen when the fuse pass runs (optimizer/
# opt_rw.c): `clrr` never links libclang, whose LLVM must not share a
# process with an OpenCL driver built on another LLVM (PoCL).
RW_SO := $(B)/lib/libclrr-rw.so
RW_SO_MAP := $(B)/gen/rw.map
$(RW_SO_MAP): rewriter/module.mk | $(B)/gen/.stamp
	echo '{ global: rw_fuse; rw_fuse_free; rw_partition; rw_partition_free; rw_specialize; rw_specialize_free; rw_coarsen; rw_coarsen_free; rw_coarsen_form_name; rw_strerror; local: *; };' > $@
$(RW_SO): $(call objs,$(RW_SRCS)) $(RW_SO_MAP)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -o $@ $(filter %.o,$^) -Wl,--version-script=$(RW_SO_MAP) $(RW_LIBS)
ALL_TARGETS += $(RW_SO)

# Unit test: fuses the workload kernels (the generated headers of
# tests/apps/*.cl) and inline ones, runs fused and unfused on the OpenCL
# driver and checks every fused source with clang -fsyntax-only. The
# device runs happen in rwt-run (tests/rw/rwt_run.c), a program of its own
# that links only OpenCL: PoCL's LLVM 15 crashes in a process that holds
# libclang-16's LLVM. One rwt-run serves all of a test's runs (rwh.c).
RWT_OBJS := $(call objs,tests/rw/rwt.c)
RWT_RUN := $(B)/tests/rwt-run
UNIT_LIBS_test_rw := $(RWT_OBJS) $(RW_LIB) $(RW_LIBS) -ldl
$(B)/tests/test_rw: $(RW_LIB) $(RWT_OBJS) $(RWT_RUN) $(RW_SO)
$(B)/obj/tests/unit/test_rw.o: $(B)/gen/apps/sobel_cl.h $(B)/gen/apps/geomatrix_cl.h \
    $(B)/gen/apps/exposure_cl.h
$(RWT_OBJS): CPPFLAGS += -DRW_TEST_CLANG='"$(LLVM_BINDIR)/clang"'
$(RWT_RUN): $(call objs,tests/rw/rwt_run.c tests/rw/rwh.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lOpenCL

# Unit test of partition-ready kernels: the workload kernels and inline
# ones, each run on the OpenCL driver as one full launch and, made
# partition-ready, as several launches of parts of it, every buffer
# compared. The device runs happen in rwp-run (tests/rw/rwp_run.c), a
# program that links only OpenCL, for the same reason as rwt-run.
RWP_OBJS := $(call objs,tests/rw/rwp.c)
RWP_RUN := $(B)/tests/rwp-run
UNIT_LIBS_test_rw_part := $(RWP_OBJS) $(RWT_OBJS) $(RW_LIB) $(RW_LIBS) -ldl
$(B)/tests/test_rw_part: $(RW_LIB) $(RWP_OBJS) $(RWT_OBJS) $(RWP_RUN) $(RW_SO)
$(B)/obj/tests/unit/test_rw_part.o: $(B)/gen/apps/vecadd_cl.h $(B)/gen/apps/nbody_cl.h \
    $(B)/gen/apps/blackscholes_cl.h $(B)/gen/apps/histogram_cl.h $(B)/gen/apps/matmul_cl.h \
    $(B)/gen/apps/ep_cl.h $(B)/gen/apps/aes_cl.h
$(RWP_RUN): $(call objs,tests/rw/rwp_run.c tests/rw/rwh.c)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lOpenCL

# Unit test of specialized kernels: the workload kernels and inline ones
# (every integer type, float, double), each run on the OpenCL driver as
# written and specialized with the same arguments, every buffer compared
# (rwp-run, one launch each); then every refusal.
UNIT_LIBS_test_rw_spec := $(RWP_OBJS) $(RWT_OBJS) $(RW_LIB) $(RW_LIBS) -ldl
$(B)/tests/test_rw_spec: $(RW_LIB) $(RWP_OBJS) $(RWT_OBJS) $(RWP_RUN) $(RW_SO)
$(B)/obj/tests/unit/test_rw_spec.o: $(B)/gen/apps/nbody_cl.h $(B)/gen/apps/matmul_cl.h \
    $(B)/gen/apps/histogram_cl.h $(B)/gen/apps/vecadd_cl.h

# Unit test of coarsened kernels: the workload kernels and inline ones, each
# run on the OpenCL driver as written and coarsened (factors 2, 4, 8, both
# forms) over the divided global size, every buffer compared (rwp-run);
# then every refusal.
UNIT_LIBS_test_rw_coarsen := $(RWP_OBJS) $(RWT_OBJS) $(RW_LIB) $(RW_LIBS) -ldl
$(B)/tests/test_rw_coarsen: $(RW_LIB) $(RWP_OBJS) $(RWT_OBJS) $(RWP_RUN) $(RW_SO)
$(B)/obj/tests/unit/test_rw_coarsen.o: $(B)/gen/apps/vecadd_cl.h $(B)/gen/apps/blackscholes_cl.h \
    $(B)/gen/apps/sobel_cl.h $(B)/gen/apps/jacobi_cl.h $(B)/gen/apps/matmul_cl.h
# The vector form of coarsening, the same way (factors 2, 4, 8, 16).
UNIT_LIBS_test_rw_vector := $(RWP_OBJS) $(RWT_OBJS) $(RW_LIB) $(RW_LIBS) -ldl
$(B)/tests/test_rw_vector: $(RW_LIB) $(RWP_OBJS) $(RWT_OBJS) $(RWP_RUN) $(RW_SO)
$(B)/obj/tests/unit/test_rw_vector.o: $(B)/gen/apps/vecadd_cl.h $(B)/gen/apps/blackscholes_cl.h \
    $(B)/gen/apps/exposure_cl.h
