# bench/: `make bench` runs the benchmark harness (bench.py, then the
# optimizer's bench/opt.py, the live plans' bench/live.py and the split
# launches' bench/split.py) and prints
# Markdown tables;
# raw figures go to bench/results/*.json.
BENCH_BINS := $(B)/bench/micro
$(B)/bench/micro: $(B)/obj/bench/micro.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -lOpenCL -lm
ALL_TARGETS += $(BENCH_BINS)

bench: all
	@bash bench/run.sh $(B)
	@$(B)/bench/xfer 4 9
	@python3 bench/opt.py $(B)
	@python3 bench/live.py $(B)
	@python3 bench/split.py $(B)

# `make bench-split`: split launches on PoCL's pairs (replay vs replay --plan).
.PHONY: bench-split
bench-split: all
	@python3 bench/split.py $(B)

# `make bench-opt`: the optimizer's table alone (replay vs replay --plan).
.PHONY: bench-opt
bench-opt: all
	@python3 bench/opt.py $(B)

# `make bench-sched`: replays without and with lanes (a plan's schedule).
.PHONY: bench-sched
bench-sched: all
	@python3 bench/sched.py $(B)

# `make bench-live`: the application without and with `clrr run --plan`.
.PHONY: bench-live
bench-live: all
	@python3 bench/live.py $(B)

# xfer: the transfer paths a layer could take for pageable bytes (GB/s).
$(B)/bench/xfer: $(B)/obj/bench/xfer.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -lOpenCL -lm
ALL_TARGETS += $(B)/bench/xfer

# waves: one kernel's device time against its number of work-groups (the
# rounds a GPU runs them in; bench/results/nvidia-h200-x4-nbody.md).
$(B)/bench/waves: $(B)/obj/bench/waves.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -lOpenCL
ALL_TARGETS += $(B)/bench/waves

# `make bench-tune`: work-group sizes tuned per launch shape (clrr optimize
# --tune) on every workload of $(B)/apps; replay plain vs with the plan.
.PHONY: bench-tune
bench-tune: all
	@python3 bench/tune.py $(B)
