#!/usr/bin/env bash
# cli_outputs.sh BUILD_DIR — every command that writes a file (trim,
# optimize, graph, timeline, run --report) writes it safely, on a trace
# recorded here on the real driver: OUT that is the input (by name, through
# a symlink, through a hard link) is refused with one line and exit 2, the
# input left byte for byte; '-' gives on stdout what OUT would hold (a
# trace: never onto a terminal); a failing run leaves an existing OUT as it
# was and no temporary behind; a symlink planted at the old predictable
# temporary name (OUT.tmp<PID>) is not followed; a FIFO is written in place;
# a SIGTERM leaves no temporary, even one sent as the temporary is made.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/vecadd"
CLRR=$(realpath "$CLRR"); APPS=$(realpath "$APPS"); SHIM=$(realpath -m "$B/tests/shims/slow_mkostemp.so")
cd "$TMP" || fail "cd $TMP"

"$CLRR" record -o v.clrr -- "$APPS/vecadd" --size 4096 --iters 2 --quiet || fail "recording vecadd"
K=$("$CLRR" dump v.clrr | grep clEnqueueNDRangeKernel | tail -1 | sed 's/^#\([0-9]*\).*/\1/')
[ -n "$K" ] || fail "no launch in the vecadd trace"
"$CLRR" optimize v.clrr -o p.plan >/dev/null || fail "clrr optimize"
cp v.clrr orig.clrr
cp p.plan orig.plan
ln -s v.clrr sym.clrr
ln v.clrr hard.clrr
ln -s p.plan sym.plan

# expect WANT CMD...: exit WANT, exactly one line on stderr starting with "clrr"
expect() {
    local want=$1; shift
    local rc=0
    "$CLRR" "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" = "$want" ] || fail "clrr $*: exit $rc, not $want: $(cat err.txt)"
    [ "$(wc -l <err.txt)" = 1 ] && grep -q '^clrr ' err.txt || fail "clrr $*: not one error line: $(cat err.txt)"
}
intact() {
    cmp -s v.clrr orig.clrr || fail "$1: the input trace changed"
    cmp -s p.plan orig.plan || fail "$1: the input plan changed"
}

# --- OUT is an input: by name, ./name, a symlink to it, a hard link of it
for o in v.clrr ./v.clrr "$TMP/v.clrr" sym.clrr hard.clrr; do
    expect 2 trim v.clrr -o "$o" --kernel "$K"; intact "trim -o $o"
    grep -q 'same file as the input' err.txt || fail "trim -o $o: $(cat err.txt)"
    expect 2 optimize v.clrr -o "$o"; intact "optimize -o $o"
    expect 2 timeline v.clrr -o "$o"; intact "timeline -o $o"
    expect 2 graph v.clrr -o "$o" --format json; intact "graph -o $o"
done
expect 2 trim sym.clrr -o v.clrr --kernel "$K"; intact "trim through a symlinked input"
expect 2 run --plan p.plan --report sym.plan -- "$APPS/vecadd" --size 64 --quiet
intact "run --report PLAN"
expect 2 profile v.clrr --costs hard.clrr; intact "profile --costs FILE"
# stdout appended to the input
rc=0; "$CLRR" timeline v.clrr -o - >>v.clrr 2>err.txt || rc=$?
[ $rc = 2 ] || fail "timeline -o - >>INPUT: exit $rc"; intact "timeline -o - >>INPUT"
[ -h sym.clrr ] && [ "$(stat -c %h v.clrr)" = 2 ] || fail "the links were touched"

# --- '-' is stdout, and holds what OUT holds
"$CLRR" timeline v.clrr -o t.json || fail "timeline -o FILE"
"$CLRR" timeline v.clrr -o - >t-stdout.json 2>err.txt || fail "timeline -o -: $(cat err.txt)"
cmp -s t.json t-stdout.json || fail "timeline -o - differs from -o FILE"
[ ! -e ./- ] || fail "timeline -o - wrote a file named '-'"
for f in dot json; do
    "$CLRR" graph v.clrr -o "g.$f" || fail "graph -o g.$f"
    "$CLRR" graph v.clrr -o - --format "$f" >"g-stdout.$f" || fail "graph -o - --format $f"
    cmp -s "g.$f" "g-stdout.$f" || fail "graph -o - --format $f differs from -o g.$f"
done
"$CLRR" graph v.clrr -o - >g-default.dot || fail "graph -o -"
cmp -s g.dot g-default.dot || fail "graph -o - is not the DOT text"
if command -v dot >/dev/null; then
    "$CLRR" graph v.clrr -o g.svg && "$CLRR" graph v.clrr -o - --format svg >g-stdout.svg || fail "graph svg"
    cmp -s g.svg g-stdout.svg || fail "graph -o - --format svg differs from -o g.svg"
fi
"$CLRR" optimize v.clrr -o - >p-stdout.plan 2>opt.err || fail "optimize -o -: $(cat opt.err)"
cmp -s p.plan p-stdout.plan || fail "optimize -o - differs from -o PLAN"
grep -q '^optimized' opt.err || fail "optimize -o -: the summary did not go to stderr: $(cat opt.err)"
"$CLRR" plan show p-stdout.plan >/dev/null || fail "the plan from stdout does not read"
expect 2 optimize v.clrr -o - --json
"$CLRR" trim v.clrr -o k.clrr --kernel "$K" --json >trim.json || fail "trim -o FILE"
"$CLRR" trim v.clrr -o - --kernel "$K" >k-stdout.clrr 2>trim.err || fail "trim -o -: $(cat trim.err)"
grep -q '^wrote stdout' trim.err || fail "trim -o -: the summary did not go to stderr: $(cat trim.err)"
[ "$("$CLRR" dump k.clrr | wc -l)" = "$("$CLRR" dump k-stdout.clrr | wc -l)" ] ||
    fail "trim -o - holds other calls than -o FILE"
"$CLRR" replay -q k-stdout.clrr || fail "the trace trim wrote on stdout does not replay verified"
"$CLRR" trim v.clrr -o - --kernel "$K" 2>/dev/null | cat >k-pipe.clrr
"$CLRR" info k-pipe.clrr >/dev/null || fail "trim -o - | cat: not a trace"
expect 2 trim v.clrr -o - --kernel "$K" --json
if command -v script >/dev/null; then
    # a trace onto a terminal: refused, nothing written to it
    script -qec "'$CLRR' trim v.clrr -o - --kernel $K" /dev/null >tty.txt 2>&1
    grep -q 'terminal' tty.txt || fail "trim -o - wrote a trace onto a terminal: $(head -c 200 tty.txt | cat -v)"
    [ "$(wc -c <tty.txt)" -lt 400 ] || fail "trim -o - on a terminal printed $(wc -c <tty.txt) bytes"
fi
"$CLRR" run --plan p.plan --report - -q -- "$APPS/vecadd" --size 4096 --iters 2 >run.out 2>run.err ||
    fail "run --report -: $(cat run.err)"
head -1 run.out | grep -q '^vecadd: ok' || fail "run --report -: the application's output is not first: $(head -2 run.out)"
tail -n +2 run.out | python3 -c 'import json,sys; json.load(sys.stdin)' ||
    fail "run --report -: no JSON report after the application's output"
"$CLRR" run --plan p.plan --report r.json -q -- "$APPS/vecadd" --size 4096 --iters 2 >/dev/null ||
    fail "run --report FILE"
python3 -c 'import json,sys; json.load(open("r.json"))' || fail "run --report FILE: no JSON"

# --- a failing run leaves OUT as it was; OUT's permissions are kept when replaced
for f in keep.clrr keep.json keep.plan; do echo "old contents" >"$f"; done
cp keep.json want
expect 3 trim v.clrr -o keep.clrr --kernel 999999
expect 3 trim nope.clrr -o keep.clrr --kernel "$K"
expect 3 timeline nope.clrr -o keep.json
printf 'CLRR\0junk' >junk.clrr
expect 3 graph junk.clrr -o keep.json
expect 3 optimize junk.clrr -o keep.plan
for f in keep.clrr keep.json keep.plan; do cmp -s "$f" want || fail "a failed command changed $f"; done
expect 3 timeline v.clrr -o /dev/full                   # a device: written in place, the error said
expect 3 timeline v.clrr -o v.clrr/t.json               # no such directory
expect 2 timeline v.clrr -o "$TMP"                      # a directory
if [ "$(id -u)" != 0 ]; then
    mkdir ro && cp keep.json ro/keep.json && chmod 555 ro
    expect 3 timeline v.clrr -o ro/keep.json
    cmp -s ro/keep.json want || fail "an unwritable directory's OUT changed"
    chmod 755 ro
fi
chmod 640 keep.json
"$CLRR" timeline v.clrr -o keep.json || fail "timeline over an existing file"
cmp -s keep.json t.json || fail "timeline did not replace keep.json"
[ "$(stat -c %a keep.json)" = 640 ] || fail "replacing keep.json changed its mode to $(stat -c %a keep.json)"

# --- a symlink OUT stays a symlink, the file it names gets the content
echo "old contents" >target.json
ln -s target.json link.json
"$CLRR" timeline v.clrr -o link.json || fail "timeline -o SYMLINK"
[ -h link.json ] && cmp -s target.json t.json || fail "timeline -o SYMLINK did not replace the file it names"
"$CLRR" timeline v.clrr -o /dev/stdout >devstdout.json || fail "timeline -o /dev/stdout"
cmp -s devstdout.json t.json || fail "timeline -o /dev/stdout differs from -o FILE"

# --- a FIFO is written in place (not replaced by a file)
mkfifo fifo
cat fifo >fifo.json &
"$CLRR" timeline v.clrr -o fifo || fail "timeline -o FIFO"
wait
[ -p fifo ] || fail "the FIFO was replaced"
cmp -s fifo.json t.json || fail "the FIFO did not receive the timeline"

# --- a symlink planted at the old temporary name (OUT.tmp<PID>) is not followed
echo "victim" >victim
for c in "timeline v.clrr -o s.json" "trim v.clrr -o s.clrr --kernel $K" "optimize v.clrr -o s.plan"; do
    out=$(echo "$c" | awk '{print $4}')
    bash -c 'ln -s victim "$1.tmp$$" && exec "$0" $2 >/dev/null' "$CLRR" "$out" "$c" || fail "clrr $c"
    [ "$(cat victim)" = victim ] || fail "clrr $c wrote through a planted symlink"
    [ -s "$out" ] || fail "clrr $c wrote nothing"
    rm -f "$out".tmp[0-9]*
done

# --- a command killed while it writes leaves no temporary (nor OUT)
printf '#!/bin/sh\nexec sleep 2\n' >slowdot && chmod +x slowdot
CLRR_DOT=$TMP/slowdot "$CLRR" graph v.clrr -o slow.svg 2>/dev/null &
pid=$!
for _ in $(seq 100); do compgen -G 'slow.svg.tmp*' >/dev/null && break; sleep 0.05; done
compgen -G 'slow.svg.tmp*' >/dev/null || fail "graph made no temporary beside slow.svg"
kill -TERM $pid; wait $pid
[ ! -e slow.svg ] && ! compgen -G 'slow.svg.tmp*' >/dev/null || fail "SIGTERM left $(ls slow.svg*)"
# ... also when the signal comes the moment the temporary exists, before
# clrr could register it (a shim holds mkostemp there 300 ms; plain build)
if [ "${CLRR_SAN:-0}" != 1 ]; then
    [ -f "$SHIM" ] || fail "no $SHIM"
    CLRR_DOT=$TMP/slowdot SLOW_MKSTEMP_MARK=early.svg.tmp LD_PRELOAD=$SHIM \
        "$CLRR" graph v.clrr -o early.svg 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do compgen -G 'early.svg.tmp*' >/dev/null && break; sleep 0.01; done
    compgen -G 'early.svg.tmp*' >/dev/null || fail "graph made no temporary beside early.svg"
    kill -TERM $pid; wait $pid
    [ ! -e early.svg ] && ! compgen -G 'early.svg.tmp*' >/dev/null ||
        fail "SIGTERM as the temporary was made left $(ls early.svg*)"
fi

# --- no temporary left behind, by any of the above
left=$(ls -A | grep '\.tmp' || true)
[ -z "$left" ] || fail "temporaries left behind: $left"
intact "the end"
echo "cli_outputs: ok"
