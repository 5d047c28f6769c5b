#!/usr/bin/env bash
# run_stage.sh BUILD_DIR — staged transfers in plan mode (`clrr run --stage`,
# recorder/rec_stage.c): large buffer writes and reads go through the
# layer's pinned blocks, copied by several threads. The speed shows on a
# discrete GPU (bench/live.py); here `--stage all` runs the same path on
# PoCL's CPU device, and every program checks its own results:
#  - sobel, geomatrix, overlap (non-blocking and blocking reads): the same
#    output as a plain run, with the expected number of staged transfers;
#    their writes are non-blocking, so they are enqueued before their copy
#    (stage_deferred: the first at least; the later ones unless a blocking
#    read found the copies still running more often than done, which
#    depends on timing; the first wait, stage_deferred_first_us after the
#    first copy, is not counted only when it found them running after at
#    least 125 us: recorder/rec_stage_vote.h, tests/unit/test_rec_stage.c);
#    with CLRR_STAGE_ASYNC=0 none is, with 2 all are, same output;
#    with reads as made, clFinish is the check;
#    copies into the blocks use streaming stores, and with CLRR_STAGE_NT=0
#    plain ones: the same output;
#  - api_tour (CLRR_STAGE_MIN=0: every buffer transfer staged): events,
#    wait lists, a write gated by a user event; its own checks pass;
#  - user_events: non-blocking reads after a user event are not staged (they
#    would block inside the layer); the program finishes, every case ok;
#  - no block within the cap (CLRR_STAGE_CAP=0): transfers run as made;
#  - auto on the CPU device: nothing staged (it shares the host's memory);
#  - bad --stage / --stage-threads: exit 2.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$APPS/sobel"; need "$B/tests/progs/api_tour"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE CLRR_STAGE CLRR_STAGE_THREADS \
    CLRR_STAGE_MIN CLRR_STAGE_CAP
strip_ms() { sed 's/ ocl_ms=[0-9.]*//' "$1"; }

# any plan will do: staging does not depend on what the plan transforms
"$CLRR" record -o "$TMP/s.clrr" -- "$APPS/sobel" --size 512 --iters 1 --quiet || fail "recording sobel"
"$CLRR" optimize "$TMP/s.clrr" -o "$TMP/s.plan" >/dev/null || fail "optimize sobel"
P=$TMP/s.plan

# app  args  staged writes  staged reads   (1 MiB buffers and more)
while read -r app args writes reads; do
    "$APPS/$app" ${args//_/ } >"$TMP/$app.plain" || fail "$app plain"
    "$CLRR" run --plan "$P" --stage all --stage-threads 4 --report "$TMP/$app.json" -- "$APPS/$app" ${args//_/ } \
        >"$TMP/$app.out" 2>"$TMP/$app.err" || fail "$app staged: $(cat "$TMP/$app.err" "$TMP/$app.out")"
    [ "$(strip_ms "$TMP/$app.out")" = "$(strip_ms "$TMP/$app.plain")" ] ||
        fail "$app staged printed $(cat "$TMP/$app.out"), plain $(cat "$TMP/$app.plain")"
    [ "$(j "$TMP/$app.json" "(d['stage'], d['stage_threads'], d['staged_writes'], d['staged_reads'])")" \
        = "('all', 4, $writes, $reads)" ] || fail "$app: $(j "$TMP/$app.json" d)"
    [ "$(j "$TMP/$app.json" "1 <= d['stage_deferred'] <= $writes and d['stage_deferred_early'] + d['stage_deferred_late'] + d['stage_deferred_uncounted'] >= 1 and (d['stage_deferred'] == $writes or d['stage_deferred_late'] > d['stage_deferred_early']) and d['stage_deferred_first_us'] >= 0 and d['stage_deferred_uncounted'] in (0, 1 if d['stage_deferred_first_us'] >= 125 else 0)")" \
        = True ] || fail "$app: copies not deferred as they should: $(j "$TMP/$app.json" d)"
    CLRR_STAGE_ASYNC=0 "$CLRR" run -q --plan "$P" --stage all --stage-threads 4 --report "$TMP/$app.sync.json" \
        -- "$APPS/$app" ${args//_/ } >"$TMP/$app.sync" 2>&1 || fail "$app staged, copies first: $(cat "$TMP/$app.sync")"
    [ "$(strip_ms "$TMP/$app.sync")" = "$(strip_ms "$TMP/$app.plain")" ] ||
        fail "$app staged, copies first, printed $(cat "$TMP/$app.sync")"
    [ "$(j "$TMP/$app.sync.json" "(d['staged_writes'], d['stage_deferred'])")" = "($writes, 0)" ] ||
        fail "$app, CLRR_STAGE_ASYNC=0: $(j "$TMP/$app.sync.json" d)"
    grep -q "^clrr run: $writes writes and $reads reads staged through pinned memory" "$TMP/$app.err" ||
        fail "$app: no staging summary: $(cat "$TMP/$app.err")"
done <<'EOF'
sobel --size_1024_--iters_3 3 3
geomatrix --size_512_--iters_2_--n_3 6 2
overlap --size_262144_--iters_4 8 4
overlap --size_262144_--iters_4_--blocking-read 8 4
overlap --size_262147_--iters_4 8 4
EOF

# CLRR_STAGE_ASYNC=2: every non-blocking write defers its copy, whatever
# the waits find (sobel's three writes), same output; 3 is refused with
# one line and the default used
CLRR_STAGE_ASYNC=2 "$CLRR" run -q --plan "$P" --stage all --stage-threads 4 --report "$TMP/a2.json" \
    -- "$APPS/sobel" --size 1024 --iters 3 >"$TMP/a2.out" 2>&1 || fail "sobel, CLRR_STAGE_ASYNC=2: $(cat "$TMP/a2.out")"
[ "$(strip_ms "$TMP/a2.out")" = "$(strip_ms "$TMP/sobel.plain")" ] || fail "sobel, CLRR_STAGE_ASYNC=2, printed $(cat "$TMP/a2.out")"
[ "$(j "$TMP/a2.json" "(d['staged_writes'], d['stage_deferred'])")" = "(3, 3)" ] ||
    fail "sobel, CLRR_STAGE_ASYNC=2: $(j "$TMP/a2.json" d)"
CLRR_STAGE_ASYNC=3 "$CLRR" run -q --plan "$P" --stage all --stage-threads 4 \
    -- "$APPS/sobel" --size 1024 --iters 3 >"$TMP/a3.out" 2>"$TMP/a3.err" || fail "sobel, CLRR_STAGE_ASYNC=3: $(cat "$TMP/a3.err")"
grep -q "^clrr: CLRR_STAGE_ASYNC=3 is not a number up to 2; using 1$" "$TMP/a3.err" || fail "CLRR_STAGE_ASYNC=3: $(cat "$TMP/a3.err")"

# reads piece by piece (CLRR_STAGE_READ_PIECE, default 1 MiB): sobel's
# 4 MiB reads are; overlap's 1048588-byte ones in 64 KiB pieces are cut
# into 16 pieces of 65537 bytes (the last shorter); with 0 none is; the
# same output every time
[ "$(j "$TMP/sobel.json" "d['stage_read_pieces']")" = 3 ] || fail "sobel: reads not piecewise: $(j "$TMP/sobel.json" d)"
CLRR_STAGE_READ_PIECE=65536 "$CLRR" run -q --plan "$P" --stage all --stage-threads 4 --report "$TMP/rp.json" \
    -- "$APPS/overlap" --size 262147 --iters 4 >"$TMP/rp.out" 2>&1 || fail "overlap, 64 KiB pieces: $(cat "$TMP/rp.out")"
[ "$(strip_ms "$TMP/rp.out")" = "$(strip_ms "$TMP/overlap.plain")" ] || fail "overlap, 64 KiB pieces, printed $(cat "$TMP/rp.out")"
[ "$(j "$TMP/rp.json" "(d['staged_reads'], d['stage_read_pieces'])")" = "(4, 4)" ] || fail "overlap, 64 KiB pieces: $(j "$TMP/rp.json" d)"
CLRR_STAGE_READ_PIECE=0 "$CLRR" run -q --plan "$P" --stage all --stage-threads 4 --report "$TMP/rp0.json" \
    -- "$APPS/sobel" --size 1024 --iters 3 >"$TMP/rp0.out" 2>&1 || fail "sobel, reads whole: $(cat "$TMP/rp0.out")"
[ "$(strip_ms "$TMP/rp0.out")" = "$(strip_ms "$TMP/sobel.plain")" ] || fail "sobel, reads whole, printed $(cat "$TMP/rp0.out")"
[ "$(j "$TMP/rp0.json" "(d['staged_reads'], d['stage_read_pieces'])")" = "(3, 0)" ] || fail "sobel, reads whole: $(j "$TMP/rp0.json" d)"

# the staging controls are in `clrr run --help`
for v in CLRR_STAGE_ASYNC CLRR_STAGE_NT CLRR_STAGE_READ_PIECE; do
    "$CLRR" run --help | grep -q "$v" || fail "clrr run --help does not name $v"
done

# copies into the blocks with plain stores (CLRR_STAGE_NT=0) instead of
# streaming ones: the same output (overlap's buffers are 1048588 bytes, not
# a multiple of the streamed 64-byte lines)
CLRR_STAGE_NT=0 "$CLRR" run -q --plan "$P" --stage all --stage-threads 4 --report "$TMP/nt0.json" \
    -- "$APPS/overlap" --size 262147 --iters 4 >"$TMP/nt0.out" 2>&1 || fail "overlap, CLRR_STAGE_NT=0: $(cat "$TMP/nt0.out")"
[ "$(strip_ms "$TMP/nt0.out")" = "$(strip_ms "$TMP/overlap.plain")" ] || fail "overlap, CLRR_STAGE_NT=0, printed $(cat "$TMP/nt0.out")"
[ "$(j "$TMP/nt0.json" "d['staged_writes']")" = 8 ] || fail "overlap, CLRR_STAGE_NT=0: $(j "$TMP/nt0.json" d)"

# reads as made (CLRR_STAGE_READS=0): clFinish is where sobel's deferred
# copy is checked
CLRR_STAGE=all CLRR_STAGE_READS=0 "$CLRR" run -q --plan "$P" --stage-threads 4 --report "$TMP/sw.json" \
    -- "$APPS/sobel" --size 1024 --iters 3 >"$TMP/sw.out" 2>&1 || fail "sobel, writes staged: $(cat "$TMP/sw.out")"
[ "$(strip_ms "$TMP/sw.out")" = "$(strip_ms "$TMP/sobel.plain")" ] || fail "sobel, writes staged, printed $(cat "$TMP/sw.out")"
[ "$(j "$TMP/sw.json" "(d['staged_writes'], d['staged_reads'], d['stage_deferred'] >= 1, d['stage_deferred_early'] + d['stage_deferred_late'] >= 1)")" \
    = "(3, 0, True, True)" ] || fail "sobel, writes staged: no check at clFinish: $(j "$TMP/sw.json" d)"

# the blocks were made when sobel created its four 4 MiB buffers (at its
# set-up: one per buffer and one more), none in its loop
[ "$(j "$TMP/sobel.json" "(d['stage_blocks'], d['stage_blocks_ahead'], d['stage_block_bytes'])")" = "(5, 5, 20971520)" ] ||
    fail "sobel: blocks not made ahead: $(j "$TMP/sobel.json" d)"

# every buffer transfer staged, one thread (no pool), and four
for t in 1 4; do
    CLRR_STAGE_MIN=0 "$CLRR" run -q --plan "$P" --stage all --stage-threads $t --report "$TMP/at$t.json" \
        -- "$B/tests/progs/api_tour" >"$TMP/at$t.out" 2>&1 || fail "api_tour staged ($t threads): $(cat "$TMP/at$t.out")"
    grep -q "^api_tour: ok" "$TMP/at$t.out" || fail "api_tour staged ($t threads): $(cat "$TMP/at$t.out")"
    [ "$(j "$TMP/at$t.json" "d['staged_writes'] > 0 and d['staged_reads'] > 0")" = True ] ||
        fail "api_tour staged nothing: $(j "$TMP/at$t.json" d)"
done

# user events: the non-blocking reads are not staged, nothing waits forever
"$B/tests/progs/user_events" >"$TMP/ue.plain" || fail "user_events plain"
CLRR_STAGE_MIN=0 timeout 60 "$CLRR" run -q --plan "$P" --stage all --report "$TMP/ue.json" \
    -- "$B/tests/progs/user_events" >"$TMP/ue.out" 2>&1 || fail "user_events staged: $(cat "$TMP/ue.out")"
diff "$TMP/ue.plain" "$TMP/ue.out" >/dev/null || fail "user_events: $(cat "$TMP/ue.out")"

# writes only (`--stage writes` is auto with CLRR_STAGE_READS=0): the reads
# run as made (they stay non-blocking)
CLRR_STAGE=all CLRR_STAGE_READS=0 "$CLRR" run -q --plan "$P" --stage-threads 2 --report "$TMP/w.json" \
    -- "$APPS/sobel" --size 1024 --iters 2 >"$TMP/w.out" 2>&1 || fail "sobel, writes only: $(cat "$TMP/w.out")"
grep -q "^sobel: ok" "$TMP/w.out" || fail "sobel, writes only: $(cat "$TMP/w.out")"
[ "$(j "$TMP/w.json" "(d['stage_reads'], d['staged_writes'], d['staged_reads'])")" = "(False, 2, 0)" ] ||
    fail "sobel, writes only: $(j "$TMP/w.json" d)"
"$CLRR" run -q --plan "$P" --stage writes --report "$TMP/w2.json" -- "$APPS/sobel" --size 512 --iters 1 >/dev/null 2>&1 ||
    fail "--stage writes"
[ "$(j "$TMP/w2.json" "(d['stage'] in ('auto', 'off'), d['stage_reads'])")" = "(True, False)" ] || fail "--stage writes: $(j "$TMP/w2.json" d)"

# no block within the cap: every transfer runs as the application made it
CLRR_STAGE_CAP=0 "$CLRR" run --plan "$P" --stage all --report "$TMP/cap.json" -- "$APPS/sobel" --size 1024 --iters 2 \
    >"$TMP/cap.out" 2>"$TMP/cap.err" || fail "sobel, cap 0: $(cat "$TMP/cap.err")"
grep -q "^sobel: ok" "$TMP/cap.out" || fail "sobel, cap 0: $(cat "$TMP/cap.out")"
[ "$(j "$TMP/cap.json" "(d['staged_writes'], d['staged_reads'], d['stage_no_block'])")" = "(0, 0, 4)" ] ||
    fail "sobel, cap 0: $(j "$TMP/cap.json" d)"
grep -q "found no free block" "$TMP/cap.err" || fail "sobel, cap 0: $(cat "$TMP/cap.err")"

# auto (the default): PoCL's CPU device shares the host's memory
"$CLRR" run -q --plan "$P" --report "$TMP/auto.json" -- "$APPS/sobel" --size 1024 --iters 2 >"$TMP/auto.out" 2>&1 ||
    fail "sobel, auto: $(cat "$TMP/auto.out")"
[ "$(j "$TMP/auto.json" "(d['staged_writes'], d['staged_reads'], d['stage'] in ('auto', 'off'))")" = "(0, 0, True)" ] ||
    fail "sobel, auto: $(j "$TMP/auto.json" d)"

# bad options: one line, exit 2, the application is not run
for bad in "--stage sometimes" "--stage-threads 0" "--stage-threads 17" "--stage-threads 2x"; do
    out=$("$CLRR" run --plan "$P" $bad -- "$APPS/sobel" 2>&1); rc=$?
    [ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "$bad: rc $rc: $out"
done
echo "ok"
