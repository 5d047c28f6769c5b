#!/usr/bin/env bash
# replay_errors.sh BUILD_DIR — `clrr replay` on bad input: one clear line
# on stderr ("clrr replay: ..."), exit 3 (2 for usage errors), never a
# crash: a missing file, a file that is not a trace, traces cut short in the
# header, a corrupted byte range, devices that do not exist, bad options.
# A trace cut short after its header is what a crashed recording leaves: it
# replays what it holds with one warning (exit 0) or says why not (exit 3). Every file of the
# trace-format fuzz corpus: exit 0, 1 or 3, never a signal, at most one line
# on stderr.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE
PY=/usr/bin/python3
CORPUS=$(dirname "$0")/../fuzz-corpus/trace-format

# run ARGS...: clrr replay ARGS; sets $rc, stdout in $TMP/out, stderr in $TMP/err
run() {
    rc=0
    timeout 60 "$CLRR" replay "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
    [ $rc -ne 124 ] || fail "clrr replay $* hangs"
    [ $rc -lt 128 ] || fail "clrr replay $* died of signal $((rc - 128)): $(tail -5 "$TMP/err")"
    # the guard (cli_guard.c) turns a crash into exit 3: one of ours is still a crash
    ! grep -q "the replay's process died of" "$TMP/err" || fail "clrr replay $* crashed: $(tail -5 "$TMP/err")"
    if grep -q 'AddressSanitizer\|UndefinedBehaviorSanitizer\|runtime error:' "$TMP/err"; then
        fail "clrr replay $*: sanitizer report: $(head -20 "$TMP/err")"
    fi
}
# bad WANT_RC [GREP] -- ARGS...: the replay exits WANT_RC with exactly one line
# on stderr that starts with "clrr replay:" (and matches GREP)
bad() {
    local want=$1 pat=
    shift
    [ "$1" = -- ] || { pat=$1; shift; }
    shift
    run "$@"
    [ $rc -eq "$want" ] || fail "clrr replay $*: exit $rc, not $want: $(head -3 "$TMP/err")"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "clrr replay $*: $(wc -l <"$TMP/err") lines on stderr, not one: $(head -5 "$TMP/err")"
    grep -q '^clrr replay: ' "$TMP/err" || fail "clrr replay $*: stderr does not start with 'clrr replay:': $(cat "$TMP/err")"
    [ -z "$pat" ] || grep -q -- "$pat" "$TMP/err" || fail "clrr replay $*: stderr does not say '$pat': $(cat "$TMP/err")"
}

T=$TMP/v.clrr
"$CLRR" record -o "$T" -- "$APPS/vecadd" --size 4096 --iters 2 --quiet >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- vecadd: $(tail -3 "$TMP/rec.out")"
run "$T"
[ $rc -eq 0 ] || fail "the vecadd trace does not replay: exit $rc: $(cat "$TMP/err")"
size=$(stat -c %s "$T")
[ "$size" -gt 4096 ] || fail "the vecadd trace is only $size bytes"

# --- files that are not (whole) traces
bad 3 "$TMP/nosuch.clrr" -- "$TMP/nosuch.clrr"
bad 3 'No such file' -- "$TMP/nosuch.clrr"
echo "not a trace at all" >"$TMP/text.clrr"
bad 3 'not a clrr trace' -- "$TMP/text.clrr"
: >"$TMP/empty.clrr"
bad 3 -- "$TMP/empty.clrr"
bad 3 -- "$TMP"                 # a directory
for n in 1 8 16 31; do          # inside the file header
    head -c $n "$T" >"$TMP/cut$n.clrr"
    bad 3 'truncated' -- "$TMP/cut$n.clrr"
done
# the whole trace is not truncated
run --json "$T"
$PY -c 'import json, sys; assert json.load(open(sys.argv[1]))["truncated"] is False' "$TMP/out" ||
    fail "the whole trace is reported truncated: $(cat "$TMP/out")"
# cut after the header: a crashed recording; what it holds replays or exit 3
# (nothing complete to replay)
calls_all=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["calls"])' <("$CLRR" replay --json "$T"))
for k in 1 2 3 4 5 6 7; do
    n=$((size * k / 8))
    head -c $n "$T" >"$TMP/cut.clrr"
    run --json "$TMP/cut.clrr"
    case $rc in
        # what it holds replayed, and one warning says the trace is truncated
        0) [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^clrr replay: warning: .* is truncated' "$TMP/err" ||
               fail "cut at $n of $size bytes: exit 0 without the one warning line: $(cat "$TMP/err")"
           $PY - "$TMP/out" "$calls_all" <<'EOF' || fail "cut at $n of $size bytes: $(cat "$TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["mismatches"] == 0 and d["truncated"] is True, d
assert 0 < d["calls"] <= int(sys.argv[2]), d
EOF
           ;;
        3) [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^clrr replay: ' "$TMP/err" ||
               fail "cut at $n of $size bytes: exit 3 with stderr: $(cat "$TMP/err")";;
        *) fail "cut at $n of $size bytes: exit $rc: $(head -3 "$TMP/err")";;
    esac
done
# a corrupted byte range in the middle: chunks are checksummed
for k in 1 2 3; do
    for pat in '\377' '\0' 'x'; do
        cp "$T" "$TMP/bad.clrr"
        head -c 64 /dev/zero | tr '\0' "$pat" | dd of="$TMP/bad.clrr" bs=1 seek=$((size * k / 4)) conv=notrunc 2>/dev/null
        cmp -s "$T" "$TMP/bad.clrr" && continue   # the bytes were already those
        bad 3 'corrupt' -- "$TMP/bad.clrr"
        # the message is for users: no source locations (CLRR_DEBUG adds them)
        ! grep -q '\.c:[0-9]' "$TMP/err" || fail "a source location in the message: $(cat "$TMP/err")"
    done
done

# --- devices and options
bad 3 'device' -- --device 99 "$T"
bad 3 'device' -- --device nosuchdevice "$T"
bad 2 'device' -- --device '' "$T"
bad 2 'compare' -- --compare '' "$T"
# a missing file is named once
bad 3 -- "$TMP/nosuch.clrr"
[ "$(grep -o 'nosuch.clrr' "$TMP/err" | wc -l)" -eq 1 ] || fail "the path is named more than once: $(cat "$TMP/err")"
bad 2 'range' -- --range 5:2 "$T"
bad 2 'range' -- --range 0:3 "$T"
bad 2 'range' -- --range abc "$T"
bad 2 'tolerance' -- --tolerance rel=abc "$T"
bad 2 'tolerance' -- --tolerance bogus=1 "$T"
bad 2 'loop' -- --loop 0 "$T"
bad 2 'loop' -- --loop -1 "$T"
bad 2 'kernel' -- --kernel x "$T"
bad 2 -- --max-memory 12Q "$T"
# memory limits: data over --max-memory (or CLRR_MAX_MEMORY) is refused, in one line
bad 3 'limit' -- --max-memory 8K "$T"
CLRR_MAX_MEMORY=8K bad 3 'limit' -- "$T"
CLRR_MAX_MEMORY=lots bad 2 'CLRR_MAX_MEMORY takes a byte count' -- "$T"
rc=0; CLRR_MAX_MEMORY=4K "$CLRR" dump "$T" >/dev/null 2>"$TMP/err" || rc=$?
[ $rc = 3 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q 'reader limit' "$TMP/err" ||
    fail "clrr dump under CLRR_MAX_MEMORY=4K: exit $rc: $(cat "$TMP/err")"
CLRR_MAX_MEMORY=1M run "$T"
[ $rc -eq 0 ] || fail "the vecadd trace does not replay within 1 MiB: exit $rc: $(cat "$TMP/err")"
bad 2 -- --no-such-option "$T"
bad 2 -- "$T" "$T"
bad 2 'missing trace file' --
# --range past the end of the trace is not an error: nothing is measured
run --json --range 100000:100001 "$T"
[ $rc -eq 0 ] || fail "--range past the end: exit $rc: $(cat "$TMP/err")"

# --- the fuzz corpus (every file)
[ -d "$CORPUS" ] || fail "no fuzz corpus at $CORPUS"
nf=0
for f in "$CORPUS"/*; do
    run "$f"
    case $rc in 0|1|3) ;; *) fail "corpus file $(basename "$f"): exit $rc: $(head -3 "$TMP/err")";; esac
    [ "$(wc -l <"$TMP/err")" -le 1 ] || fail "corpus file $(basename "$f"): $(wc -l <"$TMP/err") lines on stderr: $(head -5 "$TMP/err")"
    [ $rc -eq 0 ] || grep -q '^clrr replay: \|^MISMATCH' "$TMP/err" "$TMP/out" ||
        fail "corpus file $(basename "$f"): exit $rc without a message: $(cat "$TMP/err")"
    nf=$((nf + 1))
done
[ $nf -ge 10 ] || fail "only $nf files in $CORPUS"
echo "ok: bad input refused with one line; $nf corpus files replayed or refused cleanly"
