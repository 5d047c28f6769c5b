# bench/: `make bench` runs the benchmark harness and prints Markdown tables;
# raw figures go to bench/results/*.json.
BENCH_BINS := $(B)/bench/micro
$(B)/bench/micro: $(B)/obj/bench/micro.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -lOpenCL -lm
ALL_TARGETS += $(BENCH_BINS)

bench: all
	@bash bench/run.sh $(B)
