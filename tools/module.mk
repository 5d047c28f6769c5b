# tools/: the `clrr` command (tools/clrr/, one file per subcommand) and the
# code generator (tools/gen/).
CLI_SRCS := $(wildcard tools/clrr/*.c)
CLI_OBJS := $(call objs,$(CLI_SRCS))
$(B)/bin/clrr: $(CLI_OBJS) $(TF_LIB) $(RECCTL_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(TF_LIB) $(RECCTL_LIB) $(RT_LIBS) -lOpenCL
ALL_TARGETS += $(B)/bin/clrr
