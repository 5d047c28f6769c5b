#!/usr/bin/env bash
# cli_help.sh BUILD_DIR — golden tests of the `clrr` command line itself:
# help texts name every command and option (record's options against the
# recorder control table in recorder/rec.h), usage errors give exit 2 and
# exactly one stderr line, --version works.
set -u
B=${1:?usage: cli_help.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
CLRR=$B/bin/clrr
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CLRR" ] || fail "$CLRR is not built"
# Sanitizer reports (ASan build) must not hide behind exit status 1.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"

# run ARGS...: runs clrr; sets rc, leaves stdout in $T/out, stderr in $T/err.
run() { "$CLRR" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# usage_error ARGS...: exit 2, nothing on stdout, one line on stderr.
usage_error() {
    run "$@"
    [ $rc -eq 2 ] || fail "clrr $*: exit $rc, expected 2; stderr: $(cat "$T/err")"
    [ ! -s "$T/out" ] || fail "clrr $*: wrote to stdout: $(head -3 "$T/out")"
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "clrr $*: expected one stderr line, got: $(cat "$T/err")"
    grep -q '^clrr' "$T/err" || fail "clrr $*: stderr line does not start with 'clrr': $(cat "$T/err")"
}

# --- top level
run --help
[ $rc -eq 0 ] || fail "clrr --help: exit $rc"
grep -q '^Usage: clrr' "$T/out" || fail "clrr --help: no Usage line"
for cmd in record info dump diff devices; do
    grep -Eq "^  $cmd +[a-z]" "$T/out" || fail "clrr --help does not list '$cmd' with a synopsis"
done
# Every listed command has its own help, starting with its usage line.
cmds=$(sed -n '/^Commands:/,/^$/p' "$T/out" | awk 'NF>1 {print $1}')
[ -n "$cmds" ] || fail "clrr --help: no commands listed"
for cmd in $cmds; do
    run "$cmd" --help
    [ $rc -eq 0 ] || fail "clrr $cmd --help: exit $rc"
    grep -q "^Usage: clrr $cmd" "$T/out" || fail "clrr $cmd --help: no 'Usage: clrr $cmd' line"
    [ ! -s "$T/err" ] || fail "clrr $cmd --help wrote to stderr: $(cat "$T/err")"
    run help "$cmd"
    [ $rc -eq 0 ] && grep -q "^Usage: clrr $cmd" "$T/out" || fail "clrr help $cmd failed"
    usage_error "$cmd" --no-such-option
done

run --version
[ $rc -eq 0 ] || fail "clrr --version: exit $rc"
grep -Eq '^clrr [0-9]+\.[0-9]+\.[0-9]+' "$T/out" || fail "clrr --version printed: $(cat "$T/out")"

# --- usage errors: exit 2, one line
usage_error no-such-command
usage_error --no-such-option
usage_error help no-such-command
usage_error info
usage_error info a b
usage_error dump
usage_error dump --range
usage_error dump --range 5:3 x.clrr
usage_error dump --range abc x.clrr
usage_error info --json=1 x.clrr
usage_error devices extra
usage_error diff
usage_error diff a.clrr
usage_error diff a.clrr b.clrr c.clrr
usage_error diff --tolerance rel=-1 a.clrr b.clrr
usage_error diff --max 0 a.clrr b.clrr
usage_error record
usage_error record -o
usage_error record --level=notanumber -- true
usage_error record --memory=12Q -- true
usage_error record --capture-data=maybe -- true
run
[ $rc -eq 2 ] || fail "clrr without arguments: exit $rc, expected 2"

# --- record's options against the recorder control table
run record --help
[ $rc -eq 0 ] || fail "clrr record --help: exit $rc"
cp "$T/out" "$T/record-help"
grep -q -- '-o, --output=FILE' "$T/record-help" || fail "record --help: no '-o, --output=FILE'"
grep -q -- '--preload' "$T/record-help" || fail "record --help: no --preload"
grep -q -- '-- CMD' "$T/record-help" || fail "record --help: no '-- CMD' in the usage line"
# The table: X(type, field, ENV, "option", default, "doc") in recorder/rec.h.
REC_H=$(dirname "$0")/../../recorder/rec.h
[ -f "$REC_H" ] || fail "cannot find recorder/rec.h next to the tests"
sed -n '/#define REC_CONTROLS(X)/,/^$/p' "$REC_H" |
    sed -n 's/^ *X( *\([a-z0-9]*\), *[a-z_]*, *\([A-Z_]*\), *"\([a-z-]*\)", *\([^,]*\),.*/\1 \2 \3 \4/p' \
    >"$T/table"
n=$(wc -l <"$T/table")
[ "$n" -ge 5 ] || fail "could not parse the control table from $REC_H (got $n controls)"
while read -r type env opt def; do
    grep -q -- "--$opt\b" "$T/record-help" || fail "record --help does not mention --$opt"
    grep -q "CLRR_$env\b" "$T/record-help" || fail "record --help does not mention CLRR_$env"
    if [ "$type" = bool ]; then
        grep -q -- "--no-$opt\b" "$T/record-help" || fail "record --help does not mention --no-$opt"
    fi
done <"$T/table"
# ... and the usage names no variable that the table lacks.
for env in $(grep -o 'CLRR_[A-Z][A-Z_]*' "$T/record-help" | sort -u); do
    grep -q " ${env#CLRR_} " "$T/table" || fail "record --help names $env, which is not in the control table"
done
echo "ok: help texts and usage errors ($n recorder controls)"
