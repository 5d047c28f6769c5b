# suite_retry.sh BUILD_DIR — tests/suites/suite_run.py's rule for a
# recording killed by a signal where the plain run was not (a driver's own
# crash under load, as pyopencl's test_copy_buffer_rect in PoCL): it is
# recorded once more; a crash that does not come back is listed and not
# counted, one that comes back is a problem (exit 1). Two programs run
# vecadd and then die of SIGSEGV: one in its first recording only, the
# other in every recording; the one that crashes again is recorded the
# second time with core files on, and gdb's backtrace is in the report.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$APPS/vecadd"
# the rule is suite_run.py's, whatever the build; under the sanitizers it
# would preload the ASan runtime into the sanitized vecadd as into a
# program of someone else's
[ "${CLRR_SAN:-0}" = 1 ] && skip "suite_run.py's retry is tested in the plain build"
S=$(cd "$(dirname "$0")/../suites" && pwd)
B=$(cd "$B" && pwd)
crash='[ -n "$OPENCL_LAYERS$LD_PRELOAD" ]'   # under clrr record
printf 'once\tpy:json\t/vecadd: ok/\t%s\n' \
    "$B/apps/vecadd --size 4096 --iters 2; if $crash && [ ! -e $TMP/crashed ]; then touch $TMP/crashed; kill -SEGV \$\$; fi" \
    >"$TMP/once.list"
printf 'always\tpy:json\t/vecadd: ok/\t%s\n' \
    "$B/apps/vecadd --size 4096 --iters 2; if $crash; then kill -SEGV \$\$; fi" >"$TMP/always.list"
: >"$TMP/known"
unset OPENCL_LAYERS LD_PRELOAD
suite() { "$PY3" "$S/suite_run.py" apps --clrr "$B/bin/clrr" --list "$TMP/$1.list" --known "$TMP/known" \
    --work "$TMP/w-$1" >"$TMP/$1.out" 2>&1; }
suite once || fail "a crash that did not come back failed the suite: $(cat "$TMP/once.out")"
grep -q "recorded runs that crashed once, not again: once (" "$TMP/once.out" ||
    fail "the crash is not listed: $(cat "$TMP/once.out")"
[ -e "$TMP/crashed" ] || fail "the program never crashed"
suite always && fail "a crash in every recording passed: $(cat "$TMP/always.out")"
grep -q "PROBLEMS" "$TMP/always.out" || fail "no problem said: $(cat "$TMP/always.out")"
# the retry keeps a core file: where the crash came back is said (gdb's
# backtrace of the shell that killed itself), and the core is removed;
# only where the kernel writes cores into the crashing process's directory
if [ "$(cat /proc/sys/kernel/core_pattern 2>/dev/null)" = core ] && command -v gdb >/dev/null &&
    [ "$(ulimit -Hc)" != 0 ]; then
    grep -q "core backtrace:" "$TMP/always.out" && grep -q "Program terminated with signal SIGSEGV" "$TMP/always.out" ||
        fail "no backtrace of the crash that came back: $(cat "$TMP/always.out")"
    [ -z "$(find "$TMP/w-always" -name 'core*' -type f)" ] || fail "a core file was left: $(find "$TMP/w-always" -name 'core*')"
else
    echo "note: cores are not written into the process's directory here: no backtrace checked"
fi
echo "ok: a recording that crashed once is recorded again; one that crashes again is a problem"
