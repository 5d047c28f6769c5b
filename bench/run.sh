#!/usr/bin/env bash
# make bench: see bench/bench.py.
exec /usr/bin/python3 "$(dirname "$0")/bench.py" "$@"
