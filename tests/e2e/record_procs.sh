# One trace per process (docs/recording.md, "Several processes"), on the
# real driver, with tests/progs/forker.c:
# - concurrent children (sh -c 'A & B; wait') and sequential ones under
#   `clrr record -o NAME.clrr`: NAME.clrr and one NAME.PID.clrr per other
#   process, each readable, each with its own pid and its parent's, each
#   replayed verified; clrr record lists them and `clrr info` on the set
#   lists the processes;
# - nothing is overwritten without --force (exit 2, one line naming the file
#   and --force; the old traces untouched), also for the default name; with
#   --force the old set is replaced (its siblings removed);
# - fork, in layer and preload mode: fork before any OpenCL call (parent and
#   child both compute), fork after one call (the child starts its own
#   trace), fork after OpenCL use with a child that only calls exit() (it
#   must not hang: the recorder's exit once waited for writer threads that
#   were not forked), fork + exec of another OpenCL program; 20 forks while
#   another thread records calls in a loop (the recorder's locks are taken
#   before the fork and released in both processes: no child hangs);
# - -o DIR/: one trace per process and DIR/index.json (pid, parent, command
#   line, start), `clrr info DIR` (human and JSON);
# - a trace of the set that is unreadable makes clrr record exit 1 with a line;
# - the layer used without clrr record: two processes at once never share
#   the file (the second takes NAME.PID.clrr);
# - pytest -n 2 (pytest-xdist) over two of pyopencl's test files under
#   `clrr record -o DIR/`: one trace per process, each replayed verified.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
F=$B/tests/progs/forker
need "$F"
CLRR=$(realpath "$CLRR"); LAYER=$(realpath "$LAYER"); F=$(realpath "$F")
cd "$TMP" || fail "cd"

# traces NAME: the set of NAME.clrr (NAME.clrr first)
traces() { ls "$1".clrr 2>/dev/null; ls "$1".*.clrr 2>/dev/null | grep -E "^$1\.[0-9]+\.clrr$"; }
# verify_set N FILE...: exactly N traces, each readable and replayed verified
verify_set() {
    local n=$1; shift
    [ $# = "$n" ] || fail "$n traces expected, got $#: $*"
    for t in "$@"; do
        "$CLRR" info "$t" >info.out 2>info.err || fail "info $t: $(cat info.err)"
        grep -q '^calls ' info.out || fail "info $t: $(cat info.out)"
        "$CLRR" replay "$t" >rep.out 2>rep.err || fail "replay $t: exit $?: $(tail -3 rep.err)"
    done
}
# env_of TRACE KEY: a key of the trace's ENV record
env_of() { "$CLRR" info --json "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }
# rec_fork LABEL ARGS...: as rec, for a program that forks after its
# threads (the recorder's, PoCL's) exist. Under CLRR_SAN=1 a hang is tried
# twice more: clang 14's ASan allocator takes no lock around fork(), so a
# child forked while another thread is inside malloc deadlocks in ASan
# itself (seen: every child thread waiting in SizeClassAllocator64's
# mutex). The plain build has glibc's fork-safe malloc and gets one try.
rec_fork() {
    local label=$1; shift
    local rc=0 try
    for try in 1 2 3; do
        rc=0
        # a retry replaces the hung try's partial traces (--force)
        timeout 30 "$CLRR" record $([ $try -gt 1 ] && echo --force) "$@" >"$label.out" 2>"$label.err" || rc=$?
        # (a hung child of forker's dies of its own 20 s alarm, its stack
        # printed, before the 30 s timeout: a hang too)
        { [ $rc = 124 ] || { [ $rc != 0 ] && grep -q "^forker: a child hung" "$label.err"; }; } &&
            [ "${CLRR_SAN:-0}" = 1 ] && [ $try -lt 3 ] && { cp "$label.err" "$label.hung$try.err"; continue; }
        break
    done
    [ $rc = 124 ] && fail "$label: clrr record hung (killed after 30 s)"
    [ $rc = 0 ] || fail "$label: exit $rc: $(cat "$label.err")"
}
# rec LABEL ARGS...: clrr record ARGS, bounded in time, exit 0 expected
rec() {
    local label=$1; shift
    local rc=0
    timeout 30 "$CLRR" record "$@" >"$label.out" 2>"$label.err" || rc=$?
    [ $rc = 124 ] && fail "$label: clrr record hung (killed after 30 s)"
    [ $rc = 0 ] || fail "$label: exit $rc: $(cat "$label.err")"
}

# ---- concurrent children
rec conc -o c.clrr -- sh -c "'$F' work 4 & '$F' work 5; wait"
# shellcheck disable=SC2046
verify_set 2 $(traces c)
grep -q '2 traces written, one per process' conc.err || fail "record did not list the traces: $(cat conc.err)"
p1=$(env_of c.clrr pid); sib=$(traces c | tail -1); p2=$(env_of "$sib" pid)
[ "$p1" != "$p2" ] || fail "both traces say pid $p1"
[ "$sib" = "c.$p2.clrr" ] || fail "sibling $sib is not named by its pid $p2"
"$CLRR" info c.clrr >info.out || fail "info on the set"
grep -q '^processes  2 traces' info.out && grep -q "pid $p1 " info.out && grep -q "pid $p2 " info.out ||
    fail "info does not list the processes: $(cat info.out)"
"$CLRR" info --json c.clrr | python3 -c "
import json, sys
d = json.load(sys.stdin)
ps = d['processes']
assert len(ps) == 2 and all(p['readable'] for p in ps), ps
assert ps[0]['ppid'] == ps[1]['ppid'], ps   # both children of the shell
" || fail "info --json on the set"

# ---- nothing overwritten without --force
sum0=$(cat $(traces c) | cksum)
rc=0; "$CLRR" record -o c.clrr -- "$F" work 1 >out 2>err || rc=$?
[ $rc = 2 ] && [ "$(wc -l <err)" = 1 ] && grep -q 'c.clrr' err && grep -q -- '--force' err ||
    fail "an existing trace: exit $rc: $(cat err)"
[ "$(cat $(traces c) | cksum)" = "$sum0" ] || fail "the refused run changed the old traces"
rc=0; "$CLRR" record -o c.clrr -- "$F" work 1 >out 2>err || rc=$?
rm c.clrr   # a sibling alone is an earlier recording too
rc=0; "$CLRR" record -o c.clrr -- "$F" work 1 >out 2>err || rc=$?
[ $rc = 2 ] && grep -q "$sib" err || fail "an existing sibling: exit $rc: $(cat err)"
rec force --force -o c.clrr -- "$F" work 6
# shellcheck disable=SC2046
verify_set 1 $(traces c)
[ ! -e "$sib" ] || fail "--force left the old sibling $sib"
# the default name (<basename of CMD>.clrr)
rec def1 -- "$F" work 1
[ -s forker.clrr ] || fail "no default trace forker.clrr"
rc=0; "$CLRR" record -- "$F" work 2 >out 2>err || rc=$?
[ $rc = 2 ] && grep -q 'forker.clrr' err || fail "default name over an older trace: exit $rc: $(cat err)"
rec def2 --force -- "$F" work 2

# ---- sequential children
rec seq -o s.clrr -- sh -c "'$F' work 1; '$F' work 2; '$F' work 3"
# shellcheck disable=SC2046
verify_set 3 $(traces s)

# ---- fork, layer and preload
for mode in "" --preload; do
    m=${mode:+p}
    rec "before$m" $mode -o "b$m.clrr" -- "$F" before
    # shellcheck disable=SC2046
    verify_set 2 $(traces "b$m")
    # whichever of parent and child called OpenCL first has b.clrr
    sib=$(traces "b$m" | tail -1)
    [ "$(env_of "$sib" ppid)" = "$(env_of "b$m.clrr" pid)" ] || [ "$(env_of "b$m.clrr" ppid)" = "$(env_of "$sib" pid)" ] ||
        fail "the fork's two traces are not parent and child ($mode)"
    rec_fork "mid$m" $mode -o "m$m.clrr" -- "$F" mid
    # shellcheck disable=SC2046
    verify_set 2 $(traces "m$m")
    rec_fork "after$m" $mode -o "a$m.clrr" -- "$F" after
    # shellcheck disable=SC2046
    verify_set 1 $(traces "a$m")
    rec_fork "exec$m" $mode -o "e$m.clrr" -- "$F" exec "$F" work 9
    # shellcheck disable=SC2046
    verify_set 2 $(traces "e$m")
    # 20 forks while another thread records calls (the recorder's locks
    # held at the fork): no child hangs, each has its trace
    rec_fork "threads$m" $mode -o "t$m.clrr" -- "$F" threads 20
    [ "$(traces "t$m" | wc -l)" = 21 ] || fail "threads$m: $(traces "t$m" | wc -l) traces, expected 21: $(cat "threads$m.err")"
    for t in $(traces "t$m"); do
        "$CLRR" info "$t" >info.out 2>&1 && grep -q '^calls ' info.out || fail "threads$m: info $t: $(cat info.out)"
    done
done

# ---- -o DIR/
rec dir -o d/ -- sh -c "'$F' work 1 & '$F' before; wait"
verify_set 3 d/*.clrr
python3 - d <<'PY' || fail "index.json: $(cat d/index.json)"
import json, os, sys
d = sys.argv[1]
ps = json.load(open(os.path.join(d, 'index.json')))['processes']
files = sorted(f for f in os.listdir(d) if f.endswith('.clrr'))
assert sorted(os.path.basename(p['file']) for p in ps) == files, (ps, files)
pids = {p['pid'] for p in ps}
assert len(pids) == 3 and all(p['readable'] and p['cmdline'] and p['start_unix_ns'] for p in ps), ps
assert sum(p['ppid'] in pids for p in ps) == 1, ps   # the fork child's parent is in the set
for p in ps:
    assert os.path.basename(p['file']) == 'forker.%d.clrr' % p['pid'], p
PY
"$CLRR" info d >info.out || fail "info DIR: $(cat info.out)"
grep -q '^set        d: 3 traces' info.out && [ "$(grep -c '^  pid ' info.out)" = 3 ] || fail "info DIR: $(cat info.out)"
"$CLRR" info --json d | python3 -c "import json,sys; assert len(json.load(sys.stdin)['processes']) == 3" ||
    fail "info --json DIR"
rc=0; "$CLRR" record -o d/ -- "$F" work 1 >out 2>err || rc=$?
[ $rc = 2 ] && grep -q -- '--force' err || fail "DIR with a recording: exit $rc: $(cat err)"
rec dirf --force -o d/ -- "$F" work 1
verify_set 1 d/*.clrr

# ---- an unreadable trace in the set
rc=0; timeout 60 "$CLRR" record -o u.clrr -- sh -c "'$F' work 1; echo garbage > u.999.clrr" >out 2>err || rc=$?
[ $rc = 1 ] && grep -q 'u.999.clrr is unreadable' err || fail "unreadable sibling: exit $rc: $(cat err)"

# ---- the layer without clrr record: concurrent processes never share a file
OPENCL_LAYERS=$LAYER CLRR_OUTPUT=$TMP/l.clrr timeout 60 sh -c "'$F' work 1 & '$F' work 2; wait" ||
    fail "direct layer: exit $?"
# shellcheck disable=SC2046
verify_set 2 $(traces l)

# ---- pytest-xdist: two workers, one trace each
PYD=/usr/share/doc/python-pyopencl-doc/examples
PY=/usr/bin/python3
if [ -x $PY ] && $PY -c 'import pyopencl, pytest, numpy, xdist' 2>/dev/null && [ -e "$PYD/test_enqueue_copy.py" ]; then
    mkdir px && cp "$PYD/test_enqueue_copy.py" "$PYD/test_arrays_in_structs.py" px/
    # an ASan layer needs its runtime preloaded into python (not into clrr: it has its own)
    FOREIGN=(); rt=$(asan_rt); [ -n "$rt" ] && FOREIGN=(env "LD_PRELOAD=$rt")
    (cd px && PYOPENCL_NO_CACHE=1 PYOPENCL_COMPILER_OUTPUT=0 PYTHONDONTWRITEBYTECODE=1 \
        timeout 120 "$CLRR" record -o ../xd/ -- "${FOREIGN[@]}" $PY -m pytest -p no:cacheprovider -q -n 2 \
        . >../xd.out 2>../xd.err) ||
        fail "pytest -n 2 under clrr record: $(tail -5 xd.out) $(tail -3 xd.err)"
    n=$(ls xd/*.clrr | wc -l)
    [ "$n" -ge 2 ] || fail "pytest -n 2: $n traces: $(ls xd)"
    python3 -c "
import json
ps = json.load(open('xd/index.json'))['processes']
assert all(p['readable'] for p in ps), ps
assert len({p['pid'] for p in ps}) == len(ps), ps
" || fail "pytest -n 2: index $(cat xd/index.json)"
    for t in xd/*.clrr; do
        "$CLRR" replay "$t" >rep.out 2>rep.err || fail "pytest -n 2: replay $t: $(tail -3 rep.err)"
    done
else
    echo "note: pytest-xdist or pyopencl's tests missing: the 2-worker check skipped"
fi
echo "record_procs: ok"
