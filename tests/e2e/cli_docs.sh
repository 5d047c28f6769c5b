#!/usr/bin/env bash
# cli_docs.sh BUILD_DIR — docs/commands.md is what the built `clrr` prints:
# regenerates the page with tools/cli_docs.sh into a temporary file and
# fails, showing the difference, when the committed page differs (a usage
# string changed without `make docs`, or the page was edited by hand).
set -u
B=${1:?usage: cli_docs.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLRR=$B/bin/clrr
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CLRR" ] || fail "$CLRR is not built"
[ -f "$ROOT/docs/commands.md" ] || fail "docs/commands.md is missing (make docs)"
# Sanitizer reports (ASan build) must not hide behind a clean exit.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"

bash "$ROOT/tools/cli_docs.sh" "$CLRR" >"$T/commands.md" 2>"$T/err" ||
    fail "tools/cli_docs.sh failed: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "tools/cli_docs.sh wrote to stderr: $(cat "$T/err")"
# Every command of `clrr --help` has its section, with its usage line.
n=0
for c in $("$CLRR" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF>1 {print $1}'); do
    grep -q "^## clrr $c\$" "$T/commands.md" || fail "no section for 'clrr $c'"
    grep -q "^Usage: clrr $c" "$T/commands.md" || fail "no usage line of 'clrr $c'"
    n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n commands listed by clrr --help"
if ! diff -u "$ROOT/docs/commands.md" "$T/commands.md" >"$T/diff"; then
    head -60 "$T/diff"
    fail "docs/commands.md differs from what clrr prints: run 'make docs' and commit it"
fi
echo "ok: docs/commands.md matches clrr's help ($n commands)"
