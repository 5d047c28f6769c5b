# bench/: `make bench` runs the benchmark harness and prints Markdown tables.
bench: all
	@bash bench/run.sh $(B)
