#!/usr/bin/env bash
# corrupt_traces.sh BUILD_DIR — the corrupt and truncated traces of
# tests/corrupt/ (made by make.py from good.clrr): for each line of
# tests/corrupt/expected.txt, `clrr COMMAND FILE` exits with the status
# given, prints exactly the one line given on stderr (the path standing for
# FILE), or nothing, and, where given, that text on stdout. Never a crash:
# a signal, a hang or a sanitizer report fails. `clrr replay` runs on the
# stub driver, so the checks do not depend on the devices here;
# `replay-pocl [OPTIONS]` runs `clrr replay [OPTIONS]` on this machine's
# own driver (PoCL), which is lax: what it would crash on must be refused
# before the call.
. "$(dirname "$0")/lib.sh"
DIR=$(cd "$(dirname "$0")/../corrupt" && pwd)
STUB=$B/stub-vendors
need "$CLRR"; need "$STUB/clrrstub.icd"; need "$DIR/expected.txt"
unset OPENCL_LAYERS LD_PRELOAD CLRR_STUB_LOG POCL_DEVICES CLRR_DEBUG
REAL_VENDORS=${OCL_ICD_VENDORS:-}
STUB_VENDORS=$(realpath "$STUB")
export OCL_ICD_VENDORS=$STUB_VENDORS

n=0
declare -A seen
while IFS=$'\t' read -r file cmd want_rc want_err want_out; do
    case $file in ''|'#'*) continue;; esac
    f=$DIR/$file
    [ -f "$f" ] || fail "$file: listed in expected.txt, not in tests/corrupt/"
    seen[$file]=1
    rc=0
    read -r -a words <<<"$cmd"
    if [ "${words[0]}" = replay-pocl ]; then
        words[0]=replay
        if [ -n "$REAL_VENDORS" ]; then export OCL_ICD_VENDORS=$REAL_VENDORS; else unset OCL_ICD_VENDORS; fi
    fi
    timeout 60 "$CLRR" "${words[@]}" "$f" >"$TMP/out" 2>"$TMP/err" || rc=$?
    export OCL_ICD_VENDORS=$STUB_VENDORS
    what="clrr $cmd $file"
    [ $rc -ne 124 ] || fail "$what hangs"
    [ $rc -lt 128 ] || fail "$what died of signal $((rc - 128)): $(tail -5 "$TMP/err")"
    # the guard (cli_guard.c) turns a crash into exit 3: one of ours is still a crash
    ! grep -q "the replay's process died of" "$TMP/err" || fail "$what crashed: $(tail -5 "$TMP/err")"
    if grep -q 'AddressSanitizer\|LeakSanitizer\|UndefinedBehaviorSanitizer\|runtime error:' "$TMP/err"; then
        fail "$what: sanitizer report: $(head -20 "$TMP/err")"
    fi
    [ "$rc" = "$want_rc" ] || fail "$what: exit $rc, not $want_rc: $(head -3 "$TMP/err")"
    if [ "$want_err" = - ]; then
        [ ! -s "$TMP/err" ] || fail "$what: stderr should be empty: $(head -3 "$TMP/err")"
    else
        lines=$(wc -l <"$TMP/err")
        [ "$lines" -eq 1 ] || fail "$what: $lines lines on stderr, not one: $(head -5 "$TMP/err")"
        got=$(cat "$TMP/err")
        exp=${want_err//FILE/$f}
        [ "$got" = "$exp" ] || fail "$what: stderr
    got:      $got
    expected: $exp"
    fi
    [ -z "$want_out" ] || grep -qF -- "$want_out" "$TMP/out" ||
        fail "$what: stdout does not hold '$want_out': $(head -5 "$TMP/out")"
    n=$((n + 1))
done <"$DIR/expected.txt"
# every trace of the folder is checked
for f in "$DIR"/*.clrr; do
    [ -n "${seen[$(basename "$f")]:-}" ] || fail "$(basename "$f"): in tests/corrupt/, not in expected.txt"
done
[ $n -ge 40 ] || fail "only $n checks in expected.txt"
echo "ok: $n checks of ${#seen[@]} corrupt and truncated traces"
