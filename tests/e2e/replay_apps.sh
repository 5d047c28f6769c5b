#!/usr/bin/env bash
# replay_apps.sh BUILD_DIR — every workload application (small sizes, two
# iterations) records and replays here with exit 0, and `clrr replay --json`
# reports every read-back verified: readbacks > 0, mismatches 0, unverified
# 0. tests/progs/api_tour (a broad slice of the API: events, maps, rect
# reads, images, sub-buffers, binaries, SVM) replays the same way, with and
# without --exact-calls.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
TOUR=$B/tests/progs/api_tour
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE

# --size per application: a few KiB to a few hundred KiB of data each
declare -A SIZE=([aes]=1024 [blackscholes]=4096 [ep]=1024 [exposure]=64 [geomatrix]=32 [histogram]=65536
                 [jacobi]=64 [matmul]=32 [nbody]=256 [overlap]=4096 [sobel]=64 [spmv]=1024 [vecadd]=4096)

# check_json FILE WHAT: the summary of a complete, verified replay
check_json() {
    /usr/bin/python3 - "$1" <<'EOF' || fail "$2: clrr replay --json: $(cat "$1")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, "%d lines on stdout" % len(lines)
d = json.loads(lines[0])
assert d["ok"] is True, "ok is %r" % d["ok"]
assert d["readbacks"] > 0, "no read-back verified"
assert d["mismatches"] == 0 and d["mismatch_list"] == [], "mismatches: %r" % d["mismatch_list"]
assert d["unverified"] == 0, "%d read-backs not verified" % d["unverified"]
assert d["calls"] > 0 and d["kernels"] > 0 and d["skipped"] == 0, d
assert d["loops"] == 1, d["loops"]
# the recorded device here, or (--exact-calls) the recorded devices bound by the calls
assert d["device"] in (d["recorded_device"], "(the recorded devices, bound by the recorded calls)"), d["device"]
EOF
}

# replay NAME [OPTIONS]: replays NAME.clrr with --json; exit 0, nothing on stderr
replay() {
    local name=$1; shift
    local rc=0
    "$CLRR" replay --json "$@" "$TMP/$name.clrr" >"$TMP/$name.json" 2>"$TMP/$name.err" || rc=$?
    [ $rc -eq 0 ] || fail "$name: clrr replay $*: exit $rc: $(head -3 "$TMP/$name.err")"
    [ ! -s "$TMP/$name.err" ] || fail "$name: clrr replay $* wrote to stderr: $(head -3 "$TMP/$name.err")"
    check_json "$TMP/$name.json" "$name $*"
}

n=0
for app in "$APPS"/*; do
    name=$(basename "$app")
    size=${SIZE[$name]:-}
    [ -n "$size" ] || fail "no small --size known for the workload $name: add it to SIZE in $0"
    "$CLRR" record -o "$TMP/$name.clrr" -- "$app" --size "$size" --iters 2 --quiet >"$TMP/$name.rec" 2>&1 ||
        fail "$name: clrr record: $(tail -3 "$TMP/$name.rec")"
    replay "$name"
    n=$((n + 1))
done
[ $n -ge 13 ] || fail "only $n workload applications found in $APPS"

need "$TOUR"
"$CLRR" record -o "$TMP/tour.clrr" -- "$TOUR" --quiet >"$TMP/tour.rec" 2>&1 ||
    fail "api_tour: clrr record: $(tail -3 "$TMP/tour.rec")"
replay tour
replay tour --exact-calls
grep -q '"device":"(the recorded devices' "$TMP/tour.json" || fail "--exact-calls: the device line does not say the recorded devices are bound: $(cat "$TMP/tour.json")"
echo "ok: $n applications and api_tour replayed, every read-back verified"
