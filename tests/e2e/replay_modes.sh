#!/usr/bin/env bash
# replay_modes.sh BUILD_DIR — the modes of `clrr replay` on a vecadd trace
# of three iterations: --range (verifies the read-back inside the range,
# skips what follows), --kernel (one launch and the read-back after it;
# a call that is not a launch is an error), --loop, --timing (per-kernel
# table), --compare (the same device twice, PoCL's basic and pthread
# devices), --no-verify, --json; every launch of api_tour alone with
# --kernel, and a range of it.
# Results that differ are caught: vecadd recorded on PoCL and replayed on
# the stub driver (which runs no kernel) reports a MISMATCH naming the
# read-back's call and the launch that last wrote the buffer, and exits 1;
# read-backs completed together are reported in call order; --compare with
# the stub as the second device names the first read-back that differs.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE
PY=/usr/bin/python3
T=$TMP/v.clrr

"$CLRR" record -o "$T" -- "$APPS/vecadd" --size 4096 --iters 3 --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- vecadd: $(tail -3 "$TMP/rec.out")"
"$CLRR" dump --json "$T" >"$TMP/dump.json" || fail "clrr dump --json"
# the calls the tests pick: launches, read-backs, the clFinish after them, another call
$PY - "$TMP/dump.json" >"$TMP/seqs" <<'EOF' || fail "the vecadd trace does not have the expected shape"
import json, sys
calls = [c for c in map(json.loads, open(sys.argv[1])) if c.get("type") == "call"]
seq = lambda fn: [c["seq"] for c in calls if c["fn"] == fn]
launches, reads, finishes = seq("clEnqueueNDRangeKernel"), seq("clEnqueueReadBuffer"), seq("clFinish")
assert len(launches) == 3 and len(reads) == 3, (launches, reads)
# each launch is followed by the read-back of its result
for k, r in zip(launches, reads):
    assert r == k + 1, (k, r)
fin = min(f for f in finishes if f > reads[1])
args = seq("clSetKernelArg")
print(launches[1], fin, launches[0], args[0], calls[-1]["seq"], launches[2])
EOF
read -r K2 FIN2 K1 ARG LAST K3 <"$TMP/seqs"

# replay LABEL [OPTIONS]: clrr replay --json OPTIONS into LABEL.json; exit
# 0, nothing on stderr, a JSON object that says ok with no mismatch
replay() {
    local label=$1; shift
    local rc=0
    "$CLRR" replay --json "$@" "$T" >"$TMP/$label.json" 2>"$TMP/$label.err" || rc=$?
    [ $rc -eq 0 ] || fail "clrr replay $*: exit $rc: $(head -3 "$TMP/$label.err")"
    [ ! -s "$TMP/$label.err" ] || fail "clrr replay $* wrote to stderr: $(head -3 "$TMP/$label.err")"
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["ok"] is True and d["mismatches"] == 0, d' \
        "$TMP/$label.json" || fail "clrr replay --json $*: $(cat "$TMP/$label.json")"
}
# expect LABEL PYTHON-EXPRESSION: a check on the summary d of LABEL.json
expect() {
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert eval(sys.argv[2]), sys.argv[2]' \
        "$TMP/$1.json" "$2" 2>"$TMP/expect.err" || fail "$1: not $2: $(cat "$TMP/$1.json")"
}

# --- whole trace, --json
replay all
expect all 'd["readbacks"] == 3 and d["kernels"] == 3 and d["skipped"] == 0 and d["unverified"] == 0'
expect all 'd["loops"] == 1 and d["calls"] == '"$LAST"

# --- --range: the second iteration (its launch to the clFinish after its read)
replay range --range "$K2:$FIN2"
expect range 'd["readbacks"] == 1 and d["skipped"] > 0 and d["unverified"] == 0'
replay range_to_read --range "$K2:$((K2 + 1))"
expect range_to_read 'd["readbacks"] == 1 and d["skipped"] > 0'

# --- --kernel: the launch and the read-back right after it
replay kernel --kernel "$K2"
expect kernel 'd["readbacks"] == 1 and d["skipped"] > 0 and d["unverified"] == 0'
replay kernel1 --kernel "$K1"
expect kernel1 'd["readbacks"] == 1 and d["kernels"] == 1'
# ... of a call that is not a launch: exit 3 and one line on stderr
rc=0
"$CLRR" replay --kernel "$ARG" "$T" >"$TMP/notk.out" 2>"$TMP/notk.err" || rc=$?
[ $rc -eq 3 ] || fail "--kernel $ARG (clSetKernelArg): exit $rc, not 3: $(cat "$TMP/notk.err")"
[ "$(wc -l <"$TMP/notk.err")" -eq 1 ] || fail "--kernel $ARG: stderr is not one line: $(cat "$TMP/notk.err")"
grep -q "^clrr replay: .*#$ARG is clSetKernelArg, not a kernel launch" "$TMP/notk.err" ||
    fail "--kernel $ARG: $(cat "$TMP/notk.err")"
rc=0
"$CLRR" replay --kernel $((LAST + 100)) "$T" >/dev/null 2>"$TMP/nok.err" || rc=$?
[ $rc -eq 3 ] && [ "$(wc -l <"$TMP/nok.err")" -eq 1 ] || fail "--kernel past the end: exit $rc: $(cat "$TMP/nok.err")"

# --- --loop: three runs, verified in the first
replay loop --loop 3
expect loop 'd["loops"] == 3 and d["kernels"] == 9 and d["readbacks"] == 3 and d["unverified"] == 0'
replay loopk --loop 3 --kernel "$K2"
expect loopk 'd["loops"] == 3 and d["readbacks"] == 1'

# --- --timing: the per-kernel table names the kernel
rc=0
"$CLRR" replay --timing "$T" >"$TMP/timing.out" 2>"$TMP/timing.err" || rc=$?
[ $rc -eq 0 ] || fail "--timing: exit $rc: $(cat "$TMP/timing.err")"
grep -q '^kernels .*name' "$TMP/timing.out" || fail "--timing: no per-kernel table: $(cat "$TMP/timing.out")"
grep -Eq '^ +vecadd +3 ' "$TMP/timing.out" || fail "--timing: the table does not show vecadd's 3 launches: $(cat "$TMP/timing.out")"
grep -q "#$K2 .*clEnqueueNDRangeKernel *vecadd" "$TMP/timing.out" || fail "--timing: launch #$K2 is not listed"
replay timing --timing
expect timing '[k["name"] for k in d["kernels_timing"]] == ["vecadd"] and d["kernels_timing"][0]["launches"] == 3'
expect timing 'd["device_ns"] > 0 and d["kernels_timing"][0]["device_ns"] > 0'

# --- --compare: the same device twice agrees
rc=0
"$CLRR" replay --compare 0 "$T" >"$TMP/cmp.out" 2>"$TMP/cmp.err" || rc=$?
[ $rc -eq 0 ] || fail "--compare 0: exit $rc: $(cat "$TMP/cmp.err") $(cat "$TMP/cmp.out")"
grep -q '3 read-backs identical on both devices' "$TMP/cmp.out" || fail "--compare 0: $(cat "$TMP/cmp.out")"
replay compare --compare 0
# ... and two different devices of PoCL agree too (integer results)
rc=0
POCL_DEVICES="basic pthread" "$CLRR" replay --compare basic "$T" >"$TMP/cmp2.out" 2>"$TMP/cmp2.err" || rc=$?
[ $rc -eq 0 ] || fail "--compare basic: exit $rc: $(cat "$TMP/cmp2.err") $(cat "$TMP/cmp2.out")"
grep -q '^B  *basic.*3 read-backs, 0 mismatches' "$TMP/cmp2.out" || fail "--compare basic: $(cat "$TMP/cmp2.out")"
# ... --json: one JSON object with the comparison in it
POCL_DEVICES="basic pthread" "$CLRR" replay --json --compare basic "$T" >"$TMP/cmpj.json" 2>"$TMP/cmpj.err" ||
    fail "--compare basic --json: exit $?: $(cat "$TMP/cmpj.err")"
expect cmpj 'd["ok"] is True and d["compare"]["same"] is True and d["compare"]["compared"] == 3'

# --- --no-verify: runs everything, compares nothing
replay nover --no-verify
expect nover 'd["readbacks"] == 0 and d["kernels"] == 3 and d["unverified"] == 0'

# --- api_tour: every launch alone (objects made after it are released
# without being created), and a range in the middle
TOUR=$B/tests/progs/api_tour
need "$TOUR"
"$CLRR" record -o "$TMP/tour.clrr" -- "$TOUR" --quiet >"$TMP/tour.rec" 2>&1 || fail "clrr record -- api_tour: $(tail -3 "$TMP/tour.rec")"
"$CLRR" dump --json "$TMP/tour.clrr" >"$TMP/tour.dump" || fail "clrr dump --json api_tour"
# launches, each with 1 when the next command after it is a read
$PY - "$TMP/tour.dump" >"$TMP/tour.launches" <<'EOF'
import json, sys
calls = [c for c in map(json.loads, open(sys.argv[1])) if c.get("type") == "call"]
for i, c in enumerate(calls):
    if c["fn"] == "clEnqueueNDRangeKernel":
        nxt = next((d for d in calls[i + 1:] if d["fn"].startswith("clEnqueue")), {"fn": ""})
        # a read, or an SVM copy to host memory (its bytes were recorded)
        read = nxt["fn"].startswith("clEnqueueRead") or (
            nxt["fn"] == "clEnqueueSVMMemcpy" and (nxt.get("outs") or {}).get("dst_ptr"))
        print(c["seq"], int(bool(read)))
EOF
[ "$(wc -l <"$TMP/tour.launches")" -ge 5 ] || fail "api_tour has only $(wc -l <"$TMP/tour.launches") launches"
while read -r k reads; do
    rc=0
    "$CLRR" replay --json --kernel "$k" "$TMP/tour.clrr" >"$TMP/tourk.json" 2>"$TMP/tourk.err" || rc=$?
    [ $rc -eq 0 ] || fail "api_tour --kernel $k: exit $rc: $(cat "$TMP/tourk.err")"
    expect tourk "d['mismatches'] == 0 and d['unverified'] == 0 and d['kernels'] >= 1 and d['readbacks'] >= $reads"
done <"$TMP/tour.launches"
mid=$(sed -n 2p "$TMP/tour.launches" | cut -d' ' -f1)
rc=0
"$CLRR" replay --json --range "$mid:$((mid + 10))" "$TMP/tour.clrr" >"$TMP/tourr.json" 2>"$TMP/tourr.err" || rc=$?
[ $rc -eq 0 ] || fail "api_tour --range $mid:$((mid + 10)): exit $rc: $(cat "$TMP/tourr.err")"
expect tourr 'd["mismatches"] == 0 and d["readbacks"] >= 1 and d["skipped"] > 0'
# releases of objects the range never created are skipped, not made with NULL
expect tourr 'd["call_diffs"] == 0'
# --loop over the whole tour: SVM frees wait for the last iteration
rc=0
"$CLRR" replay --json --loop 3 "$TMP/tour.clrr" >"$TMP/tourl.json" 2>"$TMP/tourl.err" || rc=$?
[ $rc -eq 0 ] || fail "api_tour --loop 3: exit $rc: $(cat "$TMP/tourl.err")"
expect tourl 'd["mismatches"] == 0 and d["loops"] == 3 and d["readbacks"] >= 10'

# --- diverge: the reference program of clrr diff replays as recorded
for v in 0 1; do
    "$CLRR" record -o "$TMP/diverge$v.clrr" -- "$B/tests/progs/diverge" --variant $v --quiet >/dev/null 2>&1 ||
        fail "clrr record -- diverge --variant $v"
    "$CLRR" replay --json "$TMP/diverge$v.clrr" >"$TMP/diverge$v.json" 2>"$TMP/diverge.err" ||
        fail "diverge --variant $v: replay exit $?: $(cat "$TMP/diverge.err")"
    expect diverge$v 'd["readbacks"] == 3 and d["mismatches"] == 0 and d["unverified"] == 0'
done

# --- a wrong result: vecadd replayed on the stub driver, which runs no kernel
STUBV=$B/stub-vendors
if [ -f "$STUBV/clrrstub.icd" ]; then
    rc=0
    OCL_ICD_VENDORS=$(realpath "$STUBV") "$CLRR" replay --kernel "$K1" "$T" >"$TMP/stub.out" 2>"$TMP/stub.err" || rc=$?
    [ $rc -eq 1 ] || fail "vecadd on the stub: exit $rc, not 1: $(cat "$TMP/stub.err" "$TMP/stub.out")"
    grep -q "^MISMATCH call #$((K1 + 1)) clEnqueueReadBuffer ptr .*last written by vecadd (#$K1)" "$TMP/stub.out" ||
        fail "vecadd on the stub: no MISMATCH naming call #$((K1 + 1)) and vecadd (#$K1): $(cat "$TMP/stub.out")"
    grep -q '^result *MISMATCH' "$TMP/stub.out" || fail "vecadd on the stub: the result line: $(cat "$TMP/stub.out")"
    rc=0
    OCL_ICD_VENDORS=$(realpath "$STUBV") "$CLRR" replay --json "$T" >"$TMP/stub.json" 2>"$TMP/stub.err" || rc=$?
    [ $rc -eq 1 ] || fail "vecadd on the stub (--json): exit $rc, not 1: $(cat "$TMP/stub.err")"
    expect stub 'd["ok"] is False and d["mismatches"] == 3 and d["readbacks"] == 3 and "stub" in d["device"]'
    expect stub "sorted(m['call'] for m in d['mismatch_list']) == [$((K1 + 1)), $((K2 + 1)), $((K3 + 1))]"
    expect stub 'all(m["written_by"] == "vecadd (#%d)" % (m["call"] - 1) and m["differ"] > 0 for m in d["mismatch_list"])'
    # two read-backs completed by one clFinish: reported in call order
    "$CLRR" record -o "$TMP/bs.clrr" -- "$APPS/blackscholes" --size 1024 --quiet >/dev/null 2>&1 ||
        fail "clrr record -- blackscholes"
    rc=0
    OCL_ICD_VENDORS=$(realpath "$STUBV") "$CLRR" replay "$TMP/bs.clrr" >"$TMP/bs.out" 2>"$TMP/bs.err" || rc=$?
    [ $rc -eq 1 ] || fail "blackscholes on the stub: exit $rc, not 1: $(cat "$TMP/bs.err")"
    sed -n 's/^MISMATCH call #\([0-9]*\) .*last written by blackscholes (#[0-9]*).*/\1/p' "$TMP/bs.out" >"$TMP/bs.seqs"
    [ "$(wc -l <"$TMP/bs.seqs")" -ge 2 ] || fail "blackscholes on the stub: $(cat "$TMP/bs.out")"
    sort -n -c "$TMP/bs.seqs" 2>/dev/null || fail "MISMATCH lines are not in call order: $(grep MISMATCH "$TMP/bs.out")"
    # --compare with the stub as B: the first read-back where the devices differ
    mkdir -p "$TMP/both"
    cp "$STUBV/clrrstub.icd" "$TMP/both/"
    if [ -f /etc/OpenCL/vendors/pocl.icd ]; then
        cp /etc/OpenCL/vendors/pocl.icd "$TMP/both/"
        rc=0
        OCL_ICD_VENDORS=$TMP/both "$CLRR" replay --device pthread --compare stub "$T" >"$TMP/cmps.out" 2>"$TMP/cmps.err" || rc=$?
        [ $rc -eq 1 ] || fail "--compare stub: exit $rc, not 1: $(cat "$TMP/cmps.err") $(cat "$TMP/cmps.out")"
        grep -q "^compare *first difference between the devices at call #$((K1 + 1)) clEnqueueReadBuffer" "$TMP/cmps.out" ||
            fail "--compare stub does not name call #$((K1 + 1)): $(cat "$TMP/cmps.out")"
        grep -q '^result *DEVICES DIFFER' "$TMP/cmps.out" || fail "--compare stub: the result line: $(cat "$TMP/cmps.out")"
        rc=0
        OCL_ICD_VENDORS=$TMP/both "$CLRR" replay --json --device pthread --compare stub "$T" >"$TMP/cmpsj.json" \
            2>"$TMP/cmpsj.err" || rc=$?
        [ $rc -eq 1 ] || fail "--compare stub --json: exit $rc, not 1: $(cat "$TMP/cmpsj.err")"
        expect cmpsj "d['ok'] is False and d['compare']['same'] is False and d['compare']['first_difference']['seq'] == $((K1 + 1))"
        # the two read-backs of blackscholes, completed by one clFinish, are both compared
        rc=0
        OCL_ICD_VENDORS=$TMP/both "$CLRR" replay --json --device pthread --compare pthread "$TMP/bs.clrr" \
            >"$TMP/cmpbs.json" 2>"$TMP/cmpbs.err" || rc=$?
        [ $rc -eq 0 ] || fail "blackscholes --compare pthread: exit $rc: $(cat "$TMP/cmpbs.err")"
        expect cmpbs 'd["compare"]["compared"] == 2 and d["compare"]["same"] is True'
    fi
fi
echo "ok: --range, --kernel, --loop, --timing, --compare, --no-verify, --json; a wrong result is reported"
