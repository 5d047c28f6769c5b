#!/usr/bin/env bash
# cli_progress.sh BUILD_DIR — the progress line (tools/clrr/cli_progress.h)
# on a terminal (a pseudo-terminal made by util-linux's `script`): record
# (bytes written, compression ratio), replay (calls done of the total, bytes, elapsed), trim,
# profile and optimize draw it on stderr, at most 10 times a second, and
# clear it before their own output; it never appears when stderr is not a
# terminal, nor with -q or --json; stdout never holds it.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/nbody"
command -v script >/dev/null || skip "script (util-linux) is not installed"
B=$(cd "$B" && pwd); CLRR=$B/bin/clrr; APPS=$B/apps
cd "$TMP" || exit 1
export CLRR_COSTS=$TMP/costs
# the first draw at once, not after 200 ms: a fast machine replays the
# workload before that (the rate limit, 10 a second, still holds)
export CLRR_PROGRESS_MS=0
# a workload whose replay takes about a second: few calls, long kernels
APP="$APPS/nbody --size 4096 --iters 10 --quiet"

# tty NAME CMD...: runs clrr CMD on a pseudo-terminal (stdout and stderr
# both), the whole session into NAME.tty; elapsed seconds into NAME.secs.
tty() {
    local name=$1; shift
    local t0; t0=$(date +%s.%N)
    script -qec "$(printf '%q ' "$CLRR" "$@")" /dev/null >"$name.tty" 2>&1 </dev/null ||
        fail "clrr $* on a terminal: exit $?: $(tr '\r' '\n' <"$name.tty" | tail -3)"
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }' >"$name.secs"
}
# drawn NAME CMDNAME: the progress lines of NAME.tty ("clrr CMDNAME: ..."),
# one per line; checks the line is cleared before what follows it, and
# that it was drawn at most 10 times a second.
drawn() {
    local n; n=$(grep -o $'\r'"clrr $2: [^"$'\r\033'"]*"$'\033\\[K' "$1.tty" | wc -l)
    [ "$n" -ge 1 ] || fail "clrr $2 on a terminal drew no progress: $(tr '\r' '\n' <"$1.tty" | head -5)"
    local max; max=$(awk -v s="$(cat "$1.secs")" 'BEGIN { print int(s * 10 + 2) }')
    [ "$n" -le "$max" ] || fail "clrr $2: $n progress lines in $(cat "$1.secs") s: more than 10 a second"
    # after the last one, the line is erased ("\r\033[K") before anything else
    tr -d '\n' <"$1.tty" | grep -qE $'\r'"clrr $2: [^"$'\r'"]*"$'\033\\[K\r\033\\[K' ||
        fail "clrr $2: the progress line is not cleared at the end: $(tail -c 300 "$1.tty" | cat -v)"
}
none() {   # none FILE WHAT: FILE holds no progress line
    ! grep -q $'\r'"clrr [a-z]*: \|"$'\033\\[K' "$1" || fail "$2: a progress line: $(head -c 300 "$1" | cat -v)"
}

tty rec record -o n.clrr -- $APP
drawn rec record
grep -q "clrr record: [0-9.]* [KMG]*i*B written" rec.tty || fail "record's progress does not say the bytes written: $(head -c 300 rec.tty | cat -v)"
[ -s n.clrr ] || fail "record on a terminal wrote no trace"
# the compression ratio of the chunks written so far (their headers): the
# last one drawn is the finished trace's, as info computes it (within 25%:
# a last chunk may land after the last draw)
last=$(tr '\r' '\n' <rec.tty | grep -oE "clrr record: .* written, compression [0-9.]+x" | tail -1 | grep -oE "[0-9.]+x$" | tr -d x)
[ -n "$last" ] || fail "record's progress does not say the compression ratio: $(tr '\r' '\n' <rec.tty | tail -3 | cat -v)"
info=$("$CLRR" info n.clrr | sed -n 's/^ratios *compression \([0-9.]*\)x.*/\1/p')
[ -n "$info" ] || fail "info n.clrr gives no compression ratio"
awk -v a="$last" -v b="$info" 'BEGIN { exit !(a > 0 && a >= b * 0.75 && a <= b * 1.25) }' ||
    fail "record's progress says compression ${last}x, the trace's is ${info}x"
calls=$("$CLRR" dump n.clrr | grep -c '^#')

tty rep replay n.clrr
drawn rep replay
grep -qE "clrr replay: call [0-9]+ of $calls \([0-9]+%\)" rep.tty || fail "replay's progress does not say calls of $calls: $(head -c 300 rep.tty | cat -v)"
grep -q "^result *ok" <(tr -d '\r' <rep.tty) || fail "replay on a terminal: $(tr -d '\r' <rep.tty | tail -3)"

tty trim trim --range $((calls - 3)):$calls n.clrr -o t.clrr   # replays up to the range
drawn trim trim
tty prof profile n.clrr
drawn prof profile
tty opt optimize n.clrr -o n.plan
drawn opt optimize
grep -q "clrr optimize: verifying: call" opt.tty || fail "optimize's progress: $(head -c 300 opt.tty | cat -v)"

# never when stderr is not a terminal, nor with -q / --json
"$CLRR" replay n.clrr >plain.out 2>plain.err || fail "replay: exit $?"
none plain.err "replay, stderr not a terminal"
none plain.out "replay's stdout"
tty q replay -q n.clrr
none q.tty "replay -q on a terminal"
tty j replay --json n.clrr
none j.tty "replay --json on a terminal"
tty rq record --quiet -o n2.clrr -- $APP
none rq.tty "record --quiet on a terminal"
# stdout a file, stderr the terminal: stdout has none of it
script -qec "$(printf '%q ' "$CLRR" replay n.clrr) >so.out" /dev/null >so.tty 2>&1 </dev/null || fail "replay >file on a terminal"
none so.out "replay's stdout (stderr a terminal)"
grep -q "clrr replay: call" so.tty || fail "replay with stdout a file, stderr a terminal: no progress"
echo "ok: progress on a terminal for record, replay, trim, profile, optimize; none without one, with -q or --json"
