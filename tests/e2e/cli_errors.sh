#!/usr/bin/env bash
# cli_errors.sh BUILD_DIR — `clrr info` and `clrr dump` on files that are not
# good traces: missing, empty, random bytes, a directory, and truncated or
# corrupted copies of real traces (traces/*.clrr, plus one recorded here when
# the layer is built). Each must give exit 0 or 3 (docs/exit-status.md) —
# never a crash — and on exit 3 exactly one line on stderr.
set -u
B=${1:?usage: cli_errors.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
CLRR=$B/bin/clrr
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CLRR" ] || fail "$CLRR is not built"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"

# check WHAT FILE [exact_rc]: info, info --json and dump on FILE.
checks=0
check() {
    local what=$1 file=$2 want=${3:-}
    for sub in "info" "info --json" "dump" "dump --json"; do
        # shellcheck disable=SC2086
        "$CLRR" $sub "$file" >"$T/out" 2>"$T/err"
        rc=$?
        checks=$((checks + 1))
        [ $rc -lt 128 ] || fail "clrr $sub on $what crashed (exit $rc): $(tail -5 "$T/err")"
        # the guard (cli_guard.c) turns a crash into exit 3: one of ours is still a crash
        ! grep -q "the replay's process died of" "$T/err" || fail "clrr $sub on $what crashed: $(tail -5 "$T/err")"
        [ $rc -eq 0 ] || [ $rc -eq 3 ] || fail "clrr $sub on $what: exit $rc: $(tail -20 "$T/err")"
        [ -z "$want" ] || [ $rc -eq "$want" ] || fail "clrr $sub on $what: exit $rc, expected $want"
        if [ $rc -eq 3 ]; then
            [ "$(wc -l <"$T/err")" -eq 1 ] ||
                fail "clrr $sub on $what: expected one stderr line, got: $(head -20 "$T/err")"
            grep -q "^clrr ${sub%% *}: " "$T/err" || fail "clrr $sub on $what: stderr: $(cat "$T/err")"
        fi
    done
}

check "a missing file" /nonexistent/trace.clrr 3
grep -q "/nonexistent/trace.clrr" "$T/err" || fail "the error line does not name the file: $(cat "$T/err")"
: >"$T/empty"
check "an empty file" "$T/empty" 3
head -c 65536 /dev/urandom >"$T/random"
check "random bytes" "$T/random" 3
printf 'CLRR\0\0\0\0hello' >"$T/short"
check "a short file" "$T/short" 3
check "a directory" "$T" 3
cp /etc/passwd "$T/text"
check "a text file" "$T/text" 3

# Real traces to damage.
srcs=()
for f in "$(dirname "$0")"/../../traces/*.clrr; do
    [ -f "$f" ] && srcs+=("$f")
done
APP=""
for a in "$B"/apps/vecadd "$B"/apps/*; do
    [ -x "$a" ] && { APP=$a; break; }
done
if [ -f "$B/lib/libclrr.so" ] && [ -n "$APP" ]; then
    if (cd "$T" && ASAN_OPTIONS=detect_leaks=0 "$CLRR" record -o "$T/rec.clrr" -- "$APP" >/dev/null 2>"$T/rec.err"); then
        srcs+=("$T/rec.clrr")
    else
        fail "clrr record -- $APP failed: $(tail -5 "$T/rec.err")"
    fi
fi
if [ ${#srcs[@]} -eq 0 ]; then
    echo "ok: $checks checks on bad files (no real trace to damage: no traces/*.clrr, no layer)"
    exit 0
fi

RANDOM=4242
for src in "${srcs[@]}"; do
    name=$(basename "$src")
    size=$(stat -c %s "$src")
    check "$name" "$src" 0
    # Truncated: inside the header, then at spread-out points.
    for cut in 1 7 8 16 31 64 $((size / 7)) $((size / 3)) $((size / 2)) $((size - 17)) $((size - 1)); do
        [ "$cut" -gt 0 ] && [ "$cut" -lt "$size" ] || continue
        head -c "$cut" "$src" >"$T/cut"
        check "$name cut at $cut" "$T/cut"
    done
    # A truncated trace that still holds whole chunks reads, flagged truncated.
    head -c $((size * 2 / 3)) "$src" >"$T/cut"
    if "$CLRR" info --json "$T/cut" >"$T/out" 2>"$T/err"; then
        grep -q '"truncated":true' "$T/out" ||
            fail "$name cut at 2/3: info --json does not say truncated: $(head -c 300 "$T/out")"
    fi
    # Corrupted: a few bytes overwritten at random offsets past the magic.
    for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
        cp "$src" "$T/bad"
        for _ in 1 2 3; do
            off=$(( (RANDOM * 32768 + RANDOM) % size ))
            [ "$off" -ge 8 ] || off=8
            printf "\\x$(printf %02x $((RANDOM % 256)))" |
                dd of="$T/bad" bs=1 seek="$off" conv=notrunc status=none
        done
        check "$name corrupted ($i)" "$T/bad"
    done
done
echo "ok: $checks checks on bad, truncated and corrupted traces (${#srcs[@]} source traces)"
