#!/usr/bin/env bash
# cli_exit.sh BUILD_DIR — the exit-status table of docs/exit-status.md,
# command by command: every command that reads a trace exits 3 with one
# stderr line on an unreadable one (random bytes, a missing file, a trace
# cut short), plan and run on an unreadable plan say so in one line (plan:
# 3; run: 1, its statuses being CMD's); every command exits 2 with one line
# on an unknown option; every command's --help states its exit statuses.
. "$(dirname "$0")/lib.sh"
need "$CLRR"
CLRR=$(cd "$B" && pwd)/bin/clrr
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
cd "$TMP" || exit 1
head -c 4096 /dev/urandom >random.clrr
printf 'CLRR\0\0\0\0hello' >short.clrr

# expect RC FILE ARGS...: `clrr ARGS` (FILE substituted for @) exits RC with
# exactly one line on stderr, starting "clrr CMD: ".
checks=0
expect() {
    local want=$1 file=$2; shift 2
    local args=() a
    for a in "$@"; do [ "$a" = @ ] && args+=("$file") || args+=("$a"); done
    local rc=0
    "$CLRR" "${args[@]}" >out 2>err </dev/null || rc=$?
    checks=$((checks + 1))
    [ $rc -eq "$want" ] || fail "clrr ${args[*]}: exit $rc, expected $want: $(head -3 err)"
    [ "$(wc -l <err)" -eq 1 ] || fail "clrr ${args[*]}: expected one stderr line: $(head -5 err)"
    grep -q "^clrr $1: " err || fail "clrr ${args[*]}: stderr does not start 'clrr $1: ': $(cat err)"
}

# every command that reads a trace, on each unreadable file
for f in random.clrr short.clrr /nonexistent/t.clrr; do
    expect 3 "$f" info @
    expect 3 "$f" info --json @
    expect 3 "$f" dump @
    expect 3 "$f" dump --json @
    expect 3 "$f" stats @
    expect 3 "$f" stats --json @
    expect 3 "$f" graph @ -o g.dot
    expect 3 "$f" timeline @ -o t.json
    expect 3 "$f" replay @
    expect 3 "$f" replay --json @
    expect 3 "$f" trim --range 1:3 @ -o trimmed.clrr
    expect 3 "$f" diff @ random.clrr
    expect 3 "$f" analyze @
    expect 3 "$f" analyze --json @
    expect 3 "$f" profile @
    expect 3 "$f" optimize @ -o p.plan
    # a plan that cannot be read
    expect 3 "$f" plan show @
    expect 1 "$f" run --plan @ -- true
done
[ ! -e trimmed.clrr ] && [ ! -e p.plan ] && [ ! -e g.dot ] && [ ! -e t.json ] ||
    fail "a failed command left an output file: $(ls)"

# every listed command: an unknown option is 2, and --help says the statuses
cmds=$("$CLRR" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF>1 {print $1}')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 15 ] || fail "clrr --help lists too few commands: $cmds"
for c in $cmds; do
    expect 2 x "$c" --no-such-option
    "$CLRR" "$c" --help >out 2>err || fail "clrr $c --help: exit $?"
    grep -q "^Exit status" out || fail "clrr $c --help does not say its exit statuses"
done
"$CLRR" --help | grep -q "^  3  failed" || fail "clrr --help has no exit-status table"
# the table of docs/exit-status.md lists every command
doc=$DOCS/exit-status.md
for c in $cmds; do
    grep -q "^| \`$c\`" "$doc" || fail "docs/exit-status.md has no row for $c"
done
echo "ok: $checks exit statuses as docs/exit-status.md says; every command's --help says its own"
