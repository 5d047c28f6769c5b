# tests/suites/: third-party test suites (piglit's OpenCL tests, pyopencl's
# own tests) run with and without `clrr record` (tests/suites/README.md).
# CI runs a fixed subset of each through tests/e2e/suite_piglit.sh and
# tests/e2e/suite_pyopencl.sh; with CLRR_LONG=1 the same scripts run every
# test.
# LONG_E2E: scripts that `make test-long` runs in full.
LONG_E2E := tests/e2e/suite_piglit.sh tests/e2e/suite_pyopencl.sh tests/e2e/suite_apps.sh

# `make suites`: every test of piglit's and pyopencl's suites and every
# program of tests/suites/apps.list (Debian clients, and the public
# benchmark suites that tests/suites/fetch.sh fetches at pinned commits into
# $CLRR_SUITES, outside the repository), natively and under clrr record,
# each trace replayed; the tables go to $(B)/suites/. SUITES_ARGS is passed
# to suite_run.py (e.g. SUITES_ARGS='--record-device gpu --cross cpu').
SUITE_DEB_PKGS := clpeak hashcat clblast-tests clfft-client python3-gpyfft \
                  cmake autoconf g++
suites: all
	$(call deb_install,$(SUITE_DEB_PKGS))
	@mkdir -p $(B)/suites
	-@bash tests/suites/fetch.sh
	@rc=0; for s in apps piglit pyopencl; do t=; [ $$s = apps ] && t=--timing; \
	    python3 tests/suites/suite_run.py $$s --clrr $(B)/bin/clrr --known tests/suites/$$s.known \
	        --results $(B)/suites/$$s.jsonl --table $(B)/suites/$$s.md $$t \
	        -j $(or $(CLRR_SUITE_JOBS),1) $(SUITES_ARGS) || rc=1; done; exit $$rc

# `make bench-suites`: the tuner on the programs of apps.list
# (bench/suites_tune.py): each recorded, `clrr optimize --measure --tune
# --budget S`, replayed with the plan (verified, OpenCL time against the
# plain replay) and run live with it (`clrr run --plan`, whole-process time);
# the table goes to $(B)/suites/tune.md. BENCH_SUITES_ARGS is passed on
# (e.g. --budget 10 --subset FILE).
.PHONY: bench-suites
bench-suites: all
	@mkdir -p $(B)/suites
	@python3 bench/suites_tune.py --clrr $(B)/bin/clrr --results $(B)/suites/tune.jsonl --table $(B)/suites/tune.md \
	    -v $(BENCH_SUITES_ARGS)
