#!/usr/bin/env bash
# run_plan.sh BUILD_DIR — `clrr run --plan` (issue 7): the plan applied to
# the live application, through the layer in plan mode. Every workload
# verifies its results against a host reference on every iteration, so
# "ok" and exit 0 mean the optimized run computed what the plain one does.
#  - fusion (sobel, geomatrix, exposure): the pairs run as the fused kernel;
#  - dead work and redundant transfers (deadwork): redundant writes are
#    dropped, dead work is deferred and never runs;
#  - kernel arguments (kargs): a struct over 64 bytes, a __local argument
#    and a failed clSetKernelArg reach the matcher as a recording has them;
#  - a run that reads what the plan thought dead (deadwork --observe): the
#    deferred kernel runs after all, the read-back is what a plain run reads;
#  - other data (--seed), other shapes (--size): still right; other shapes
#    fall back;
#  - bad plans and command lines: one line, exit 1 or 2, and the
#    application is not started with a plan it cannot use.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$APPS/sobel"; need "$B/tests/progs/deadwork"; need "$B/tests/progs/kargs"
[ -e "$B/lib/libclrr-rw.so" ] || skip "the rewriter (libclrr-rw.so) is not built"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE
DW=$B/tests/progs/deadwork
# the layer through OPENCL_LAYERS, as `clrr record` loads it; our programs
# carry ASan's runtime themselves in the sanitizer build
run() { "$CLRR" run "$@"; }

# app  args  fused launches per run  of which given a blank buffer for an
# intermediate (one nothing wrote before the producer: geomatrix's fresh
# temporaries every time, sobel's and exposure's buffers the first time);
# geomatrix's whole chain of 8 launches is one fused launch per iteration
while read -r app args fused blank; do
    "$CLRR" record -o "$TMP/$app.clrr" -- "$APPS/$app" ${args//_/ } --quiet || fail "recording $app"
    "$CLRR" optimize "$TMP/$app.clrr" -o "$TMP/$app.plan" >/dev/null || fail "optimize $app"
    run --plan "$TMP/$app.plan" --report "$TMP/$app.r.json" -- "$APPS/$app" ${args//_/ } \
        >"$TMP/$app.out" 2>"$TMP/$app.err" || fail "$app with the plan: $(cat "$TMP/$app.err" "$TMP/$app.out")"
    grep -q "^$app: ok" "$TMP/$app.out" || fail "$app with the plan: $(cat "$TMP/$app.out")"
    [ "$(j "$TMP/$app.r.json" "d['fused_launches']")" = "$fused" ] ||
        fail "$app: $(j "$TMP/$app.r.json" "d") (expected $fused fused launches)"
    [ "$(j "$TMP/$app.r.json" "d['fused_blank']")" = "$blank" ] ||
        fail "$app: $(j "$TMP/$app.r.json" "d") (expected $blank fused launches with a blank intermediate)"
    # where the time went: every launch the application made is counted,
    # as many as its recording holds
    launches=$("$CLRR" dump --json "$TMP/$app.clrr" | grep -c '"fn":"clEnqueueNDRangeKernel"')
    [ "$(j "$TMP/$app.r.json" "d['call_us']['clEnqueueNDRangeKernel'][0]")" = "$launches" ] ||
        fail "$app: $(j "$TMP/$app.r.json" "d['call_us']") (expected $launches launches timed)"
    # ... of which running the fused launches, freeing what they held within it
    [ "$(j "$TMP/$app.r.json" "(d['fuse_us'] > 0, d['fuse_us'] >= d['unhold_us'] >= 0, d['hold_us'] >= 0)")" \
        = "(True, True, True)" ] || fail "$app: fused launches' times: $(j "$TMP/$app.r.json" "(d['hold_us'], d['fuse_us'], d['unhold_us'])")"
    grep -q "^clrr run: plan .*transformations applied" "$TMP/$app.err" || fail "$app: no summary: $(cat "$TMP/$app.err")"
    grep -q "^clrr run: $fused fused launches ($blank with a blank intermediate)" "$TMP/$app.err" ||
        fail "$app: no blank intermediates in the summary: $(cat "$TMP/$app.err")"
    # other data, same shapes: fused again, still right
    run -q --plan "$TMP/$app.plan" --report "$TMP/$app.r2.json" -- "$APPS/$app" ${args//_/ } --seed=5 \
        >"$TMP/$app.out2" 2>&1 || fail "$app --seed=5 with the plan: $(cat "$TMP/$app.out2")"
    grep -q "^$app: ok" "$TMP/$app.out2" || fail "$app --seed=5: $(cat "$TMP/$app.out2")"
    [ "$(j "$TMP/$app.r2.json" "d['fused_launches'] > 0")" = True ] || fail "$app --seed=5 did not fuse"
done <<'EOF'
geomatrix --size=128_--iters=2 2 2
exposure --size=128_--iters=2 6 1
sobel --size=256_--iters=1 1 1
EOF

# geomatrix's chain: each fused launch passes the blank buffer for all 7
# temporaries; the 7 launches it held per iteration are kept, and freed
# unrun when the application releases what they write (it releases each
# temporary while the chain is still held: that counts too)
[ "$(j "$TMP/geomatrix.r.json" "(d['fused_blank_params'], d['deferred'], d['ran_after_all'], d['never_ran'], d['fell_back'])")" \
    = "(14, 14, 0, 14, 0)" ] || fail "geomatrix's chain: $(j "$TMP/geomatrix.r.json" d)"

# sobel's gather: the fused launch passes the blank buffer for both gx
# (written two launches before the magnitude) and gy
[ "$(j "$TMP/sobel.r.json" "(d['fused_blank_params'], d['fused_launches'])")" = "(2, 1)" ] ||
    fail "sobel's gather: $(j "$TMP/sobel.r.json" d)"

# kernel arguments as the recording stored them (tests/progs/kargs.c): an
# 80-byte struct (its hash) in the pair fused every iteration, a __local
# argument (nil) in the dead launch deferred every iteration, and a failed
# clSetKernelArg (a buffer argument of the wrong size) between the good one
# and the launch, which neither the launch nor the matcher may take
K=$B/tests/progs/kargs
"$CLRR" record -o "$TMP/kargs.clrr" -- "$K" --iters 3 >/dev/null || fail "recording kargs"
"$CLRR" optimize "$TMP/kargs.clrr" -o "$TMP/kargs.plan" >/dev/null || fail "optimize kargs"
run -q --plan "$TMP/kargs.plan" --report "$TMP/kargs.json" -- "$K" --iters 3 >"$TMP/kargs.out" 2>&1 ||
    fail "kargs with the plan: $(cat "$TMP/kargs.out")"
grep -q "^kargs: ok iters=3" "$TMP/kargs.out" || fail "kargs with the plan: $(cat "$TMP/kargs.out")"
[ "$(j "$TMP/kargs.json" "(d['fused_launches'], d['never_ran'], d['unmatched'])")" = "(3, 3, 0)" ] ||
    fail "kargs: $(j "$TMP/kargs.json" d) (expected 3 fused pairs and 3 dead launches never run)"

# sobel over 4 iterations: the first gx and gy launches are deferred (the
# fused kernel stores neither) and run after all when the next image
# overwrites their input; from then on the gathers run as the storing twin,
# each still fused
"$CLRR" record -o "$TMP/s4.clrr" -- "$APPS/sobel" --size 256 --iters 4 --quiet || fail "recording sobel --iters 4"
"$CLRR" optimize "$TMP/s4.clrr" -o "$TMP/s4.plan" >/dev/null || fail "optimize sobel --iters 4"
run --plan "$TMP/s4.plan" --report "$TMP/s4.json" -- "$APPS/sobel" --size 256 --iters 4 >"$TMP/s4.out" 2>"$TMP/s4.err" ||
    fail "sobel --iters 4 with the plan: $(cat "$TMP/s4.err")"
grep -q "^sobel: ok" "$TMP/s4.out" || fail "sobel --iters 4: $(cat "$TMP/s4.out")"
[ "$(j "$TMP/s4.json" "(d['fused_launches'], d['deferred'], d['ran_after_all'], d['fell_back'], d['data_hashed'])")" \
    = "(4, 2, 2, 2, False)" ] || fail "sobel --iters 4: $(j "$TMP/s4.json" d)"
# gx and gy were written by the first gather's producers: only the first
# fused launch may take blank buffers for them (one, for both)
[ "$(j "$TMP/s4.json" "d['fused_blank']")" = 1 ] || fail "sobel --iters 4: blank intermediates: $(j "$TMP/s4.json" d)"
grep -q "^clrr run: .* ms building fused kernels, .* ms matching calls" "$TMP/s4.err" ||
    fail "sobel --iters 4: no time summary: $(cat "$TMP/s4.err")"
[ "$(j "$TMP/s4.json" "d['steady']")" = 0 ] || fail "sobel --iters 4: steady: $(j "$TMP/s4.json" d)"
# a run longer than the recording (12 iterations, 4 recorded): past the
# recorded occurrences each call gets its pattern's last transformation (the
# loop's steady state), so every pair is still fused
run --plan "$TMP/s4.plan" --report "$TMP/s12.json" -- "$APPS/sobel" --size 256 --iters 12 >"$TMP/s12.out" 2>"$TMP/s12.err" ||
    fail "sobel --iters 12 with the 4-iteration plan: $(cat "$TMP/s12.err")"
grep -q "^sobel: ok" "$TMP/s12.out" || fail "sobel --iters 12: $(cat "$TMP/s12.out")"
[ "$(j "$TMP/s12.json" "(d['fused_launches'], d['steady'] >= 16)")" = "(12, True)" ] ||
    fail "sobel --iters 12: $(j "$TMP/s12.json" d)"
grep -q "^clrr run: .* calls came after the recording's last transformed occurrence" "$TMP/s12.err" ||
    fail "sobel --iters 12: no steady-state line: $(cat "$TMP/s12.err")"

# other shapes: nothing fuses, the results are right
run -q --plan "$TMP/geomatrix.plan" --report "$TMP/gs.json" -- "$APPS/geomatrix" --size=64 --iters=2 \
    >"$TMP/gs.out" 2>&1 || fail "geomatrix --size=64: $(cat "$TMP/gs.out")"
grep -q "^geomatrix: ok" "$TMP/gs.out" || fail "geomatrix --size=64: $(cat "$TMP/gs.out")"
# (the fused kernels were built all the same, when geomatrix built its
# program: at set-up, before anything could match)
[ "$(j "$TMP/gs.json" "(d['fused_launches'], d['applied'], d['fused_build_us'] > 0, d['fused_unbuilt'])")" \
    = "(0, 0, True, 0)" ] || fail "other shapes: $(j "$TMP/gs.json" d)"

# deadwork: 3 iterations, 9 dead commands deferred, 4 redundant writes
# and fills dropped; the stats kernels of the first two iterations run
# after all (the next iteration overwrites their input), the rest never
"$CLRR" record -o "$TMP/dw.clrr" -- "$DW" --iters 3 --quiet || fail "recording deadwork"
"$CLRR" optimize "$TMP/dw.clrr" -o "$TMP/dw.plan" >/dev/null || fail "optimize deadwork"
run -q --plan "$TMP/dw.plan" --report "$TMP/dw.json" -- "$DW" --iters 3 >"$TMP/dw.out" 2>&1 ||
    fail "deadwork with the plan: $(cat "$TMP/dw.out")"
[ "$(j "$TMP/dw.json" "(d['dropped'], d['deferred'], d['ran_after_all'], d['never_ran'], d['unmatched'], d['data_hashed'])")" \
    = "(4, 9, 2, 7, 0, True)" ] || fail "deadwork: $(j "$TMP/dw.json" d)"
[ "$(j "$TMP/dw.json" "sum('ran after all' in f['reason'] for f in d['fallbacks'])")" = 2 ] ||
    fail "deadwork: the kept commands that ran are not listed with their reason: $(j "$TMP/dw.json" d)"
# 4 MiB buffers: the dead write of zeros (b) is past what the layer keeps
# (1 MiB: a copy costs what the write does), so its 3 run as made; the
# launches and the fill are deferred as before, and the results are right
"$CLRR" record -o "$TMP/dwb.clrr" -- "$DW" --iters 3 --size 1048576 --work 1 --quiet || fail "recording deadwork --size 1048576"
"$CLRR" optimize "$TMP/dwb.clrr" -o "$TMP/dwb.plan" >/dev/null || fail "optimize deadwork --size 1048576"
run -q --plan "$TMP/dwb.plan" --report "$TMP/dwb.json" -- "$DW" --iters 3 --size 1048576 --work 1 >"$TMP/dwb.out" 2>&1 ||
    fail "deadwork --size 1048576 with the plan: $(cat "$TMP/dwb.out")"
grep -q "^deadwork: ok" "$TMP/dwb.out" || fail "deadwork --size 1048576: $(cat "$TMP/dwb.out")"
[ "$(j "$TMP/dwb.json" "(d['deferred'], d['not_kept'])")" = "(6, 3)" ] || fail "deadwork, 4 MiB writes: $(j "$TMP/dwb.json" d)"
# a guess kernel given an SVM allocation through clSetKernelExecInfo: the
# layer cannot know what it reaches, so its 3 launches run at once (not
# kept) instead of being deferred; the results are still right
run -q --plan "$TMP/dw.plan" --report "$TMP/dwx.json" -- "$DW" --iters 3 --exec-info >"$TMP/dwx.out" 2>&1 ||
    fail "deadwork --exec-info with the plan: $(cat "$TMP/dwx.out")"
[ "$(j "$TMP/dwx.json" "(d['deferred'], d['not_kept'])")" = "(6, 3)" ] || fail "deadwork --exec-info: $(j "$TMP/dwx.json" d)"
# 9 iterations with the 3-iteration plan: the steady state defers every
# iteration's dead work; reading the stats back (--observe) still gets the
# plain run's checksum
run -q --plan "$TMP/dw.plan" --report "$TMP/dw9.json" -- "$DW" --iters 9 >"$TMP/dw9.out" 2>&1 ||
    fail "deadwork --iters 9: $(cat "$TMP/dw9.out")"
[ "$(j "$TMP/dw9.json" "(d['never_ran'] > 7, d['steady'] > 0)")" = "(True, True)" ] || fail "deadwork --iters 9: $(j "$TMP/dw9.json" d)"
"$DW" --iters 9 --observe >"$TMP/obs9.plain" || fail "deadwork --iters 9 --observe"
run -q --plan "$TMP/dw.plan" -- "$DW" --iters 9 --observe >"$TMP/obs9.out" 2>&1 ||
    fail "deadwork --iters 9 --observe with the plan: $(cat "$TMP/obs9.out")"
diff "$TMP/obs9.plain" "$TMP/obs9.out" >/dev/null || fail "deadwork --iters 9 --observe: $(cat "$TMP/obs9.out")"
# the same with other data
run -q --plan "$TMP/dw.plan" --report "$TMP/dw7.json" -- "$DW" --iters 3 --seed 7 >"$TMP/dw7.out" 2>&1 ||
    fail "deadwork --seed 7: $(cat "$TMP/dw7.out")"
[ "$(j "$TMP/dw7.json" "d['never_ran']")" = 7 ] || fail "deadwork --seed 7: $(j "$TMP/dw7.json" d)"
# a run that reads the stats the plan thought dead: the last stats kernel
# runs after all, and the checksum is the plain run's
"$DW" --iters 3 --observe >"$TMP/obs.plain" || fail "deadwork --observe"
run -q --plan "$TMP/dw.plan" --report "$TMP/obs.json" -- "$DW" --iters 3 --observe >"$TMP/obs.out" 2>&1 ||
    fail "deadwork --observe with the plan: $(cat "$TMP/obs.out")"
diff "$TMP/obs.plain" "$TMP/obs.out" >/dev/null || fail "deadwork --observe: $(cat "$TMP/obs.out") vs $(cat "$TMP/obs.plain")"
[ "$(j "$TMP/obs.json" "d['ran_after_all']")" = 3 ] || fail "deadwork --observe: $(j "$TMP/obs.json" d)"
# other shapes: the redundant coefficient writes still drop (checked as
# they run), nothing else applies, the results are right
run -q --plan "$TMP/dw.plan" --report "$TMP/dws.json" -- "$DW" --iters 2 --size 4096 >"$TMP/dws.out" 2>&1 ||
    fail "deadwork --size 4096: $(cat "$TMP/dws.out")"
[ "$(j "$TMP/dws.json" "(d['deferred'], d['fused_launches'])")" = "(0, 0)" ] || fail "other shapes: $(j "$TMP/dws.json" d)"

# errors: one line, the application is not run
echo '{"format": "clrr-plan", "version": "1.1"}' >"$TMP/bad.plan"
out=$("$CLRR" run --plan "$TMP/bad.plan" -- "$DW" 2>&1); rc=$?
[ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [[ $out == "clrr run: $TMP/bad.plan: "* ]] ||
    fail "bad plan: rc $rc: $out"
out=$("$CLRR" run --plan "$TMP/missing.plan" -- "$DW" 2>&1); rc=$?
[ "$rc" = 1 ] && [[ $out == "clrr run: cannot read plan"* ]] || fail "missing plan: rc $rc: $out"
out=$("$CLRR" run -- "$DW" 2>&1); rc=$?
[ "$rc" = 2 ] && [[ $out == *"--plan PLAN is required"* ]] || fail "no --plan: rc $rc: $out"
out=$("$CLRR" run --plan "$TMP/dw.plan" 2>&1); rc=$?
[ "$rc" = 2 ] || fail "no command: rc $rc: $out"
out=$("$CLRR" run --plan "$TMP/dw.plan" -- /nonexistent/app 2>&1); rc=$?
[ "$rc" = 127 ] || fail "missing command: rc $rc: $out"
# the layer's cost record (costs/COSTS.md `l`): its per-run part holds what
# clrr run took before the application (CLRR_RUN_PRE_NS, which clrr run
# sets: a positive count under a second, seen by the application)
rm -f "$TMP/lcost"
CLRR_COSTS=$TMP/lcost run -q --plan "$TMP/dw.plan" -- sh -c 'echo "$CLRR_RUN_PRE_NS" >"$0.pre"; exec "$1" --iters 3' \
    "$TMP/lrun" "$DW" >/dev/null 2>&1 || fail "run with the layer's cost learned"
pre=$(cat "$TMP/lrun.pre")
[[ $pre =~ ^[0-9]+$ ]] && [ "$pre" -gt 0 ] && [ "$pre" -lt 1000000000 ] || fail "CLRR_RUN_PRE_NS: '$pre'"
fixed=$(awk -F'\t' '$1 == "l" { print $5; exit }' "$TMP/lcost")
[ -n "$fixed" ] && [ "$fixed" -ge "$pre" ] || fail "the layer's cost record: fixed '$fixed' ns, below clrr run's own $pre ns: $(cat "$TMP/lcost")"
# ... as the layer reads it: 5 s of it appear in the record
rm -f "$TMP/lcost"
CLRR_COSTS=$TMP/lcost CLRR_PLAN=$TMP/dw.plan CLRR_PLAN_REPORT=$TMP/lr.json CLRR_RUN_PRE_NS=5000000000 LD_PRELOAD=$LAYER \
    CLRR_TRUST_PLAN=1 "$DW" --iters 3 \
    >/dev/null 2>&1 || fail "the layer with CLRR_RUN_PRE_NS"
fixed=$(awk -F'\t' '$1 == "l" { print $5; exit }' "$TMP/lcost")
[ -n "$fixed" ] && [ "$fixed" -ge 5000000000 ] || fail "CLRR_RUN_PRE_NS=5 s: the record's fixed part '$fixed' ns: $(cat "$TMP/lcost" 2>/dev/null)"

# the application's exit status is clrr's
"$DW" --size 1 >/dev/null 2>&1; want=$?
run -q --plan "$TMP/dw.plan" -- "$DW" --size 1 >/dev/null 2>&1; rc=$?
[ "$want" != 0 ] && [ "$rc" = "$want" ] || fail "exit status: $rc, expected $want"
echo "ok"
