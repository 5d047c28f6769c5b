#!/usr/bin/env bash
# record_stage.sh BUILD_DIR — staged transfers while recording (`clrr record
# --stage`, recorder/README.md "Staged transfers"): large buffer writes and
# reads go through the layer's pinned blocks (live/live_stage.c) while the
# recorder captures their bytes. The speed shows on a discrete GPU
# (bench/gpu_recorder_stage.sh); here `--stage all` runs the same path on
# PoCL's CPU device:
#  - sobel, geomatrix, overlap (non-blocking and blocking reads, a size
#    that is not a multiple of 64 bytes): the program prints what it prints
#    without clrr, every write and read of 512 KiB or more was staged
#    (CLRR_REC_COUNTS), the trace replays verified and holds the same calls
#    and read-backs as a recording with --stage off (clrr diff: "same",
#    every read-back compared; another seed's all differ): a staged
#    blocking read's read-back is a DATA record captured from the layer's
#    block after the call, in the END with CLRR_REC_STAGE_HOLD=0;
#  - deferred copies off and forced (CLRR_STAGE_ASYNC=0 and 2), writes only:
#    the same output and the same trace;
#  - api_tour with every buffer transfer staged (CLRR_STAGE_MIN=0): events,
#    wait lists, a write gated by a user event; its own checks pass and its
#    trace replays verified;
#  - user_events: non-blocking reads after a user event are not staged;
#    nothing waits forever;
#  - tests/progs/forker, fork before and after OpenCL: each process stages
#    its own transfers into its own trace, every one replayed verified;
#  - auto (the default) on the CPU device: nothing staged;
#  - a bad --stage or CLRR_STAGE: one line, exit 2, nothing run.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$APPS/sobel"; need "$B/tests/progs/api_tour"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE CLRR_STAGE CLRR_STAGE_THREADS \
    CLRR_STAGE_MIN CLRR_STAGE_CAP CLRR_STAGE_ASYNC CLRR_STAGE_READS CLRR_REC_COUNTS
strip_ms() { sed 's/ ocl_ms=[0-9.]*//' "$1"; }
staged() { sed -n 's/.* staged_transfers \([0-9]*\).*/\1/p' "$1"; }

# rec NAME COUNTS_WANTED APP ARGS...: recorded with the environment's
# staging, the same output as plain ($TMP/APP.plain), the staged count,
# replayed verified
rec() {
    local name=$1 want=$2 app=$3
    shift 3
    rm -f "$TMP/$name.counts"
    CLRR_REC_COUNTS=$TMP/$name.counts CLRR_STAGE_THREADS=${CLRR_STAGE_THREADS:-4} \
        "$CLRR" record --quiet -o "$TMP/$name.clrr" $STAGE -- "$app" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
        fail "$name: recording: $(cat "$TMP/$name.err")"
    [ "$(strip_ms "$TMP/$name.out")" = "$(strip_ms "$TMP/$(basename "$app").plain")" ] ||
        fail "$name printed $(cat "$TMP/$name.out"), plain $(cat "$TMP/$(basename "$app").plain")"
    [ "$(staged "$TMP/$name.counts")" = "$want" ] || fail "$name: staged $(cat "$TMP/$name.counts"), want $want"
    "$CLRR" replay "$TMP/$name.clrr" >"$TMP/$name.rpl" 2>&1 || fail "$name: replay: $(cat "$TMP/$name.rpl")"
}
# same NAME OTHER: the two traces hold the same calls and read-backs, every
# read-back compared (a staged read's is a DATA record, captured from the
# layer's block after the call returned; the other's is in the call's END)
same() {
    "$CLRR" diff "$TMP/$1.clrr" "$TMP/$2.clrr" >"$TMP/$1.diff" 2>&1 || fail "$1 against $2: $(cat "$TMP/$1.diff")"
    grep -q "^same: [0-9]* calls, [1-9][0-9]* read-backs compared$" "$TMP/$1.diff" ||
        fail "$1 against $2: $(cat "$TMP/$1.diff")"
}

# app  args  staged transfers (writes + reads of 512 KiB and more)
k=0
while read -r app args n; do
    a=(${args//_/ })
    "$APPS/$app" "${a[@]}" >"$TMP/$app.plain" || fail "$app plain"
    k=$((k + 1)); tag=$app$k
    STAGE="--stage off" rec "$tag.off" 0 "$APPS/$app" "${a[@]}"
    STAGE="--stage all" rec "$tag.all" "$n" "$APPS/$app" "${a[@]}"
    same "$tag.all" "$tag.off"
done <<'EOF'
sobel --size_1024_--iters_3 6
geomatrix --size_512_--iters_2_--n_3 8
overlap --size_262144_--iters_4 12
overlap --size_262144_--iters_4_--blocking-read 12
overlap --size_262147_--iters_4 12
EOF

# a staged blocking read's read-back is captured from the layer's block
# after the call (a DATA record); with CLRR_REC_STAGE_HOLD=0 from the
# application's memory before it returns (in the END), as unstaged
late() { "$CLRR" dump "$TMP/$1.clrr" | grep -c "^   data #"; }
"$APPS/overlap" --size 262144 --iters 4 --blocking-read >"$TMP/overlap.plain" || fail "overlap plain"
STAGE="--stage all" CLRR_REC_STAGE_HOLD=0 rec overlap.hold0 12 "$APPS/overlap" --size 262144 --iters 4 --blocking-read
same overlap.hold0 overlap4.off
[ "$(late overlap4.all) $(late overlap4.off) $(late overlap.hold0)" = "4 0 0" ] ||
    fail "late read-backs (staged, off, hold 0): $(late overlap4.all) $(late overlap4.off) $(late overlap.hold0)"

# the comparison can fail: another seed's staged read-backs differ from
# the plain recording's, every one of them (diff both ways)
CLRR_STAGE_THREADS=4 "$CLRR" record --quiet -o "$TMP/seed2.clrr" --stage all -- "$APPS/sobel" --size 1024 --iters 3 \
    --seed 2 >"$TMP/seed2.out" 2>&1 || fail "sobel --seed 2: $(cat "$TMP/seed2.out")"
for pair in "seed2 sobel1.off" "sobel1.off seed2"; do
    set -- $pair
    "$CLRR" diff "$TMP/$1.clrr" "$TMP/$2.clrr" --max 100 --json >"$TMP/seed.json" 2>&1 && fail "$1 against $2: same"
    [ "$(j "$TMP/seed.json" "(d['readbacks_compared'], d['captured_one_side'], sum(1 for x in d['differences'] if x['output']))")" \
        = "(3, 0, 3)" ] || fail "$1 against $2: $(cat "$TMP/seed.json")"
done

# copies first, every copy deferred, writes only: the same output, the same trace
STAGE="--stage all" CLRR_STAGE_ASYNC=0 rec sobel.sync 6 "$APPS/sobel" --size 1024 --iters 3
same sobel.sync sobel1.off
STAGE="--stage all" CLRR_STAGE_ASYNC=2 rec sobel.async 6 "$APPS/sobel" --size 1024 --iters 3
same sobel.async sobel1.off
STAGE="" CLRR_STAGE=all CLRR_STAGE_READS=0 rec sobel.w 3 "$APPS/sobel" --size 1024 --iters 3
same sobel.w sobel1.off
# `--stage writes` is auto for writes alone: nothing staged on the CPU device
STAGE="--stage writes" rec sobel.wauto 0 "$APPS/sobel" --size 1024 --iters 3

# every buffer transfer staged: events, wait lists, a user event's write
"$B/tests/progs/api_tour" >"$TMP/api_tour.plain" || fail "api_tour plain"
rm -f "$TMP/at.counts"
CLRR_STAGE_MIN=0 CLRR_REC_COUNTS=$TMP/at.counts "$CLRR" record --quiet -o "$TMP/at.clrr" --stage all \
    -- "$B/tests/progs/api_tour" >"$TMP/at.out" 2>&1 || fail "api_tour staged: $(cat "$TMP/at.out")"
grep -q "^api_tour: ok" "$TMP/at.out" || fail "api_tour staged: $(cat "$TMP/at.out")"
[ "$(staged "$TMP/at.counts")" -gt 0 ] || fail "api_tour staged nothing: $(cat "$TMP/at.counts")"
"$CLRR" replay "$TMP/at.clrr" >"$TMP/at.rpl" 2>&1 || fail "api_tour: replay: $(cat "$TMP/at.rpl")"

# user events: the program finishes, every case ok
"$B/tests/progs/user_events" >"$TMP/ue.plain" || fail "user_events plain"
CLRR_STAGE_MIN=0 timeout 60 "$CLRR" record --quiet -o "$TMP/ue.clrr" --stage all -- "$B/tests/progs/user_events" \
    >"$TMP/ue.out" 2>&1 || fail "user_events staged: $(cat "$TMP/ue.out")"
diff "$TMP/ue.plain" "$TMP/ue.out" >/dev/null || fail "user_events: $(cat "$TMP/ue.out")"

# processes: fork before OpenCL (parent and child each stage their own
# transfers into their own traces) and after it (the child only exits;
# the parent works on), every trace replayed verified
C=$(realpath "$CLRR"); F=$(realpath "$B/tests/progs/forker")
for m in before after; do
    mkdir -p "$TMP/fork.$m"
    rm -f "$TMP/fork.$m.counts"
    (cd "$TMP/fork.$m" && CLRR_STAGE_MIN=0 CLRR_STAGE_THREADS=2 CLRR_REC_COUNTS=$TMP/fork.$m.counts timeout 60 \
        "$C" record --quiet -o f.clrr --stage all -- "$F" $m >out 2>&1) ||
        fail "forker $m staged: $(cat "$TMP/fork.$m/out")"
    want=$([ $m = before ] && echo "2 2" || echo 4)
    [ "$(staged "$TMP/fork.$m.counts" | sort | tr '\n' ' ' | sed 's/ $//')" = "$want" ] ||
        fail "forker $m: staged $(cat "$TMP/fork.$m.counts"), want $want"
    for t in "$TMP/fork.$m"/*.clrr; do
        "$CLRR" replay "$t" >"$TMP/fork.rpl" 2>&1 || fail "forker $m: replay $t: $(cat "$TMP/fork.rpl")"
    done
done

# auto, the default: PoCL's CPU device shares the host's memory
STAGE="" rec sobel.auto 0 "$APPS/sobel" --size 1024 --iters 3

# bad values: one line, exit 2, the application is not run
for bad in "--stage sometimes" "--stage="; do
    out=$("$CLRR" record -o "$TMP/bad.clrr" $bad -- "$APPS/sobel" 2>&1); rc=$?
    [ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [ ! -e "$TMP/bad.clrr" ] || fail "$bad: rc $rc: $out"
done
out=$(CLRR_STAGE=sometimes "$CLRR" record -o "$TMP/bad.clrr" -- "$APPS/sobel" 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [ ! -e "$TMP/bad.clrr" ] || fail "CLRR_STAGE=sometimes: rc $rc: $out"
echo "ok"
