# clrr trim: a single-kernel trim of a many-iteration run is small (under
# 1/10 of the full trace), replays on its own with every read-back verified
# (including the reads trim adds after the launch), and a --range trim does
# too; bad requests give one error line and exit 2 or 3, leaving no output.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/vecadd"; need "$APPS/sobel"
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d['$1'])"; }

"$CLRR" record -o "$TMP/v.clrr" -- "$APPS/vecadd" --size 65536 --iters 20 --quiet || fail "recording vecadd"
K=$("$CLRR" dump "$TMP/v.clrr" | grep clEnqueueNDRangeKernel | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
[ -n "$K" ] || fail "no launch in the vecadd trace"
"$CLRR" trim "$TMP/v.clrr" -o "$TMP/k.clrr" --kernel "$K" --json >"$TMP/trim.json" || fail "clrr trim --kernel $K"
full=$(stat -c %s "$TMP/v.clrr"); cut=$(stat -c %s "$TMP/k.clrr")
[ $((cut * 10)) -lt "$full" ] || fail "the trimmed trace ($cut bytes) is not under 1/10 of the full one ($full)"
k2=$(json kernel <"$TMP/trim.json")
"$CLRR" replay --json "$TMP/k.clrr" >"$TMP/r.json" || fail "the trimmed trace does not replay verified"
[ "$(json mismatches <"$TMP/r.json")" = 0 ] || fail "mismatches in the trimmed replay"
[ "$(json readbacks <"$TMP/r.json")" -ge 4 ] || fail "trim did not add reads that verify the kernel's outputs"
[ "$(json kernels <"$TMP/r.json")" = 1 ] || fail "the trimmed trace does not hold exactly one launch"
"$CLRR" replay --json --kernel "$k2" "$TMP/k.clrr" >"$TMP/rk.json" || fail "replay --kernel $k2 of the trimmed trace"

# a planted difference in the state at the start is caught: replay the
# trimmed trace onto the stub driver (which runs no kernel)
if [ -e "$B/stub-vendors/clrrstub.icd" ]; then
    rc=0; OCL_ICD_VENDORS=$(realpath "$B/stub-vendors") "$CLRR" replay -q "$TMP/k.clrr" >"$TMP/stub.out" 2>&1 || rc=$?
    [ $rc = 1 ] || fail "a trimmed kernel replayed where no kernel runs: exit $rc"
fi

# a range of sobel (three kernels and the read-back)
"$CLRR" record -o "$TMP/s.clrr" -- "$APPS/sobel" --size 256 --iters 3 --quiet || fail "recording sobel"
last=$("$CLRR" dump "$TMP/s.clrr" | grep clEnqueueReadBuffer | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
first=$("$CLRR" dump "$TMP/s.clrr" | grep clEnqueueNDRangeKernel | tail -3 | head -1 | sed 's/^#\([0-9]*\).*/\1/')
"$CLRR" trim "$TMP/s.clrr" -o "$TMP/sr.clrr" --range "$first:$last" >/dev/null || fail "clrr trim --range $first:$last"
"$CLRR" replay --json "$TMP/sr.clrr" >"$TMP/sr.json" || fail "the range trim does not replay verified"
[ "$(json kernels <"$TMP/sr.json")" = 3 ] || fail "the range trim does not hold the three launches"
[ "$(json readbacks <"$TMP/sr.json")" -ge 1 ] || fail "the range trim verifies nothing"

# errors: one line, exit 2 (usage) or 3 (failed), nothing left behind
check() {
    want=$1; shift
    rc=0; "$CLRR" trim "$@" >"$TMP/o" 2>"$TMP/e" || rc=$?
    [ $rc = "$want" ] || fail "clrr trim $*: exit $rc, not $want"
    [ "$(wc -l <"$TMP/e")" = 1 ] || fail "clrr trim $*: not one error line: $(cat "$TMP/e")"
}
check 2 "$TMP/v.clrr" -o "$TMP/x.clrr"
check 2 "$TMP/v.clrr" -o "$TMP/x.clrr" --kernel 3 --range 1:2
check 2 "$TMP/v.clrr" --kernel 3
check 3 "$TMP/v.clrr" -o "$TMP/x.clrr" --kernel 3
check 3 "$TMP/v.clrr" -o "$TMP/x.clrr" --kernel 999999
check 3 "$TMP/nope.clrr" -o "$TMP/x.clrr" --kernel 3
[ ! -e "$TMP/x.clrr" ] || fail "a failed trim left its output behind"
echo ok
