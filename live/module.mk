# live/: applying a plan to a run (public header live/live.h).
#  - the matcher (live_match.c, live_defer.c; live_rpl.c: as a replay's
#    plan hook): fed every call of a run,
#    answers run, drop, defer, hold, fuse or split; `clrr replay --plan`
#    and the layer both use it. Plan (plan/) and the replayer's split
#    engine (replayer/rpl.h) below it.
#  - the layer's plan mode (live_layer.c, live_stage.c): deferral, staging,
#    fused and split launches in the application's own process, through
#    the recorder's hook table (recorder/rec.h); linked into libclrr.so
#    only (the top-level Makefile lists the layer's objects).
# libclive.a archives both for clrr and the tests (clrr reaches only the
# matcher).
LIVE_MATCH_SRCS := live/live_match.c live/live_defer.c live/live_rpl.c
LIVE_LAYER_SRCS := live/live_layer.c live/live_stage.c live/live_kcache.c
LIVE_SRCS := $(LIVE_MATCH_SRCS) $(LIVE_LAYER_SRCS)
LIVE_OBJS := $(call objs,$(LIVE_SRCS))
MOD_CFLAGS_live := -fvisibility=hidden
$(LIVE_OBJS): $(B)/gen/rec_gen.h $(B)/gen/rpl_gen.h
LIVE_LIB := $(B)/lib/libclive.a

$(LIVE_LIB): $(call objs,$(LIVE_MATCH_SRCS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

ALL_TARGETS += $(LIVE_LIB)
