#!/usr/bin/env bash
# opt_clblast.sh BUILD_DIR — `clrr optimize` on a CLBlast test (Debian
# clblast-tests; skipped without it). Issue 36: on clblast_test_xim2col the
# optimizer took 9 minutes (the tracker looked at every memory object ever
# made at each clFinish: 229,376 buffers, 311,296 finishes) and wrote a
# plan of 180,224 transformations (93 MB) that `clrr replay --plan` then
# refused. xim2col takes about 50 s here under clrr (12 s to record, 37 s
# to optimize and verify), too long for make test: this runs the same
# harness on clblast_test_xswap (about 5 s), which creates, writes and
# releases its buffers the same way. The plan must be one clrr reads
# (plan show), replay verified, and optimize must stay bounded.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
T=$(command -v clblast_test_xswap) || skip "clblast-tests not installed"
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"

# a program we did not build gets the ASan runtime through env when the
# layer is an ASan build (as in cli_record_clinfo.sh)
FOREIGN=()
if [ "${CLRR_SAN:-0}" = 1 ]; then
    rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
    [ -f "$rt" ] || skip "no shared ASan runtime for programs we did not build"
    FOREIGN=(env "LD_PRELOAD=$rt")
fi
"$CLRR" record -o "$TMP/t.clrr" -- "${FOREIGN[@]}" "$T" -precision 32 >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- clblast_test_xswap: $(tail -3 "$TMP/rec.out")"
[ -s "$TMP/t.clrr" ] || fail "no trace: $(tail -3 "$TMP/rec.out")"
grep -q ' 0 test(s) failed' "$TMP/rec.out" || fail "clblast_test_xswap failed under the recorder: $(tail -3 "$TMP/rec.out")"
start=$(date +%s)
timeout 60 "$CLRR" optimize "$TMP/t.clrr" -o "$TMP/t.plan" >"$TMP/opt.out" 2>"$TMP/opt.err" ||
    fail "clrr optimize: $(cat "$TMP/opt.err")"
took=$(( $(date +%s) - start ))
[ "$took" -le 30 ] || fail "clrr optimize took $took s"
grep -q '^verified  the plan replayed here' "$TMP/opt.out" || fail "the plan is not verified: $(cat "$TMP/opt.out" "$TMP/opt.err")"
grep -q '^plan      [1-9][0-9]* transformations' "$TMP/opt.out" || fail "nothing found: $(cat "$TMP/opt.out")"
"$CLRR" plan show "$TMP/t.plan" >"$TMP/show.out" 2>&1 || fail "clrr plan show refuses the plan: $(head -3 "$TMP/show.out")"
"$CLRR" replay "$TMP/t.clrr" --plan "$TMP/t.plan" >"$TMP/rp.out" 2>&1 || fail "clrr replay --plan: $(tail -5 "$TMP/rp.out")"
grep -q '^result    ok' "$TMP/rp.out" || fail "replay --plan did not verify: $(tail -5 "$TMP/rp.out")"
grep -q ' 0 fell back' "$TMP/rp.out" || fail "transformations fell back: $(grep '^plan' "$TMP/rp.out")"
echo "ok: clblast_test_xswap optimized in $took s; the plan is read back and replays verified"
