#!/usr/bin/env bash
# cli_record.sh BUILD_DIR — `clrr record` as a launcher: options become
# CLRR_* variables (every control of the table), the layer is set up through
# OPENCL_LAYERS or LD_PRELOAD, the exit status of the command comes back
# exactly (128+N for a signal), the default output is ./<basename>.clrr; and
# a recorded workload gives a trace that info and dump (human, JSON, range)
# read, also when the recording was killed.
set -u
B=${1:?usage: cli_record.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CLRR=$(realpath "$B/bin/clrr")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CLRR" ] || fail "$B/bin/clrr is not built"
[ -f "$B/lib/libclrr.so" ] || { echo "skip: $B/lib/libclrr.so is not built"; exit 77; }
LAYER=$(realpath "$B/lib/libclrr.so")
# Recorded programs are not ours: their leaks are not reported.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
unset OPENCL_LAYERS LD_PRELOAD
# Programs we did not build (sh, clinfo, python3) get the ASan runtime
# preloaded through `env` when the layer is an ASan build (CLRR_SAN=1): the
# layer needs it first, and only the recorded program may get it (clrr has
# its own). Preload mode cannot load the ASan layer into them at all.
FOREIGN=()
if [ "${CLRR_SAN:-0}" = 1 ]; then
    rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
    [ -f "$rt" ] || { echo "skip: no shared ASan runtime for programs we did not build"; exit 77; }
    FOREIGN=(env "LD_PRELOAD=$rt")
fi
cd "$T" || exit 1

# --- the launcher (commands that make no OpenCL call)
"$CLRR" record -- sh -c 'exit 3' 2>/dev/null
rc=$?
[ $rc -eq 3 ] || fail "exit status 3 came back as $rc"
"$CLRR" record -- true 2>/dev/null || fail "exit status 0 came back as $?"

out=$("$CLRR" record --level=5 --no-device-timing --memory=64M --quiet -o o.clrr -- \
      sh -c 'echo "$CLRR_LEVEL|$CLRR_DEVICE_TIMING|$CLRR_MEMORY|$CLRR_QUIET|$CLRR_OUTPUT|$OPENCL_LAYERS|${LD_PRELOAD:-}"' 2>/dev/null)
[ "$out" = "5|0|64M|1|$T/o.clrr|$LAYER|" ] || fail "environment of the recorded command: '$out'"
out=$(OPENCL_LAYERS=/some/layer.so "$CLRR" record -- sh -c 'echo "$OPENCL_LAYERS|$CLRR_OUTPUT"' 2>/dev/null)
[ "$out" = "/some/layer.so:$LAYER|$T/sh.clrr" ] || fail "OPENCL_LAYERS not appended, or default output wrong: '$out'"
if [ ${#FOREIGN[@]} -eq 0 ]; then
    out=$(LD_PRELOAD=libfoo.so "$CLRR" record --preload -o p.clrr -- sh -c 'echo "${OPENCL_LAYERS:-}|$LD_PRELOAD|$CLRR_OUTPUT"' 2>/dev/null)
    [ "$out" = "|$LAYER:libfoo.so|$T/p.clrr" ] || fail "--preload environment: '$out'"
fi

# Every control of the table is accepted with its default value.
REC_H=$SRC/recorder/rec.h
sed -n '/#define REC_CONTROLS(X)/,/^$/p' "$REC_H" |
    sed -n 's/^ *X( *\([a-z0-9]*\), *[a-z_]*, *\([A-Z_]*\), *"\([a-z-]*\)", *\([^,]*\),.*/\1 \2 \3 \4/p' >table
[ "$(wc -l <table)" -ge 5 ] || fail "could not parse the control table from $REC_H"
while read -r type env opt def; do
    def=${def//\"/}
    [ "$opt" = output ] && def=$T/out.clrr
    [ "$opt" = device ] && def=0   # no default (NULL); any device here
    got=$("$CLRR" record "--$opt=$def" -- sh -c "echo \"\$CLRR_$env\"" 2>"$T/err")
    [ "$got" = "$def" ] || fail "--$opt=$def gave CLRR_$env='$got' ($(cat "$T/err"))"
done <table

# Signals, and programs that cannot be run.
"$CLRR" record -- sh -c 'kill -TERM $$' 2>err
rc=$?
[ $rc -eq 143 ] || fail "a command killed by SIGTERM: exit $rc, expected 143"
grep -q "killed by signal 15" err || fail "no 'killed by signal 15' message: $(cat err)"
[ "$(wc -l <err)" -eq 1 ] || fail "killed command: expected one stderr line: $(cat err)"
"$CLRR" record -- ./no-such-program 2>err
rc=$?
[ $rc -eq 127 ] || fail "missing program: exit $rc, expected 127"
[ "$(wc -l <err)" -eq 1 ] || fail "missing program: expected one stderr line: $(cat err)"
"$CLRR" record -o /nonexistent-dir/x.clrr -- true 2>err
rc=$?
[ $rc -eq 1 ] || fail "unwritable output: exit $rc, expected 1"
[ "$(wc -l <err)" -eq 1 ] || fail "unwritable output: expected one stderr line: $(cat err)"

# --- a real workload
APP=$B/apps/vecadd
[ -x "$APP" ] || { echo "ok: launcher checks (no $APP: workload part skipped)"; exit 0; }
APP=$(realpath "$APP")
"$APP" --size 65536 --iters 3 >plain.out 2>plain.err || fail "$APP fails without clrr: $(cat plain.err)"
"$CLRR" record -- "$APP" --size 65536 --iters 3 >rec.out 2>rec.err
rc=$?
[ $rc -eq 0 ] || fail "clrr record -- vecadd: exit $rc: $(tail -5 rec.err)"
[ -s vecadd.clrr ] || fail "no ./vecadd.clrr (the default output) after recording vecadd"
[ ! -s rec.err ] || [ "$(cat plain.err)" = "$(cat rec.err)" ] ||
    fail "recording added to stderr: $(head -5 rec.err)"

"$CLRR" info vecadd.clrr >info.txt 2>err || fail "clrr info: $(cat err)"
for word in command recorded calls kernels transfers duration; do
    grep -q "^$word" info.txt || fail "clrr info has no '$word' line: $(cat info.txt)"
done
grep -q "vecadd" info.txt || fail "clrr info does not show the command line"
"$CLRR" info --json vecadd.clrr >info.json 2>err || fail "clrr info --json: $(cat err)"
"$CLRR" dump vecadd.clrr >dump.txt 2>err || fail "clrr dump: $(cat err)"
"$CLRR" dump --json vecadd.clrr >dump.json 2>err || fail "clrr dump --json: $(cat err)"
"$CLRR" dump --json --range 3:6 vecadd.clrr >range.json 2>err || fail "clrr dump --range: $(cat err)"
grep -q "clEnqueueNDRangeKernel(" dump.txt || fail "dump has no clEnqueueNDRangeKernel call"
grep -q "clEnqueueWriteBuffer(\|clCreateBuffer(" dump.txt || fail "dump shows no buffer writes"
[ "$(grep -c '^#' dump.txt)" -eq "$(grep -c '"type":"call"' dump.json)" ] ||
    fail "dump and dump --json disagree on the number of calls"
/usr/bin/python3 - <<'EOF' || fail "JSON output of info/dump is wrong"
import json
info = json.load(open("info.json"))
calls = [json.loads(l) for l in open("dump.json")]
rng = [json.loads(l) for l in open("range.json")]
c = [x for x in calls if x["type"] == "call"]
assert info["calls"] == len(c), (info["calls"], len(c))
assert info["kernel_launches"] == sum(x["fn"] in ("clEnqueueNDRangeKernel", "clEnqueueTask") for x in c)
assert info["kernel_launches"] >= 3, info["kernel_launches"]
assert info["transfers"] >= 6 and info["bytes_host_to_device"] >= 3 * 2 * 65536 * 4, info
assert info["bytes_device_to_host"] >= 3 * 65536 * 4, info
assert any("vecadd" in a for a in info["cmdline"]), info["cmdline"]
assert sorted(x["seq"] for x in c) == list(range(1, len(c) + 1)), "call seqs are not 1..N"
for x in c:
    assert set(x) >= {"seq", "tid", "fn", "t_begin", "t_end", "complete", "args", "ret", "outs"}
    assert isinstance(x["args"], dict)
rc = [x for x in rng if x["type"] == "call"]
assert sorted(x["seq"] for x in rc) == [3, 4, 5, 6], [x["seq"] for x in rc]
assert all(3 <= x["seq"] <= 6 for x in rng), "range output holds items of other calls"
EOF

# --- a recording that is killed: what was flushed stays readable
PY=/usr/bin/python3
if $PY -c 'import pyopencl' 2>/dev/null; then
    cat >killed.py <<'EOF'
import os, signal, time
import numpy as np
import pyopencl as cl
ctx = cl.Context(dev_type=cl.device_type.CPU)
q = cl.CommandQueue(ctx)
a = np.arange(1024, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
cl.enqueue_copy(q, a, buf)
q.finish()
time.sleep(1.0)
os.kill(os.getpid(), signal.SIGKILL)
EOF
    PYOPENCL_NO_CACHE=1 "$CLRR" record --flush-ms=50 -o killed.clrr -- "${FOREIGN[@]}" $PY killed.py >/dev/null 2>err
    rc=$?
    [ $rc -eq 137 ] || fail "killed recording: exit $rc, expected 137: $(cat err)"
    grep -q "killed by signal 9 (trace kept: $T/killed.clrr)" err || fail "killed recording: $(cat err)"
    "$CLRR" info --json killed.clrr >k.json 2>err || fail "clrr info on a killed recording: $(cat err)"
    $PY -c 'import json,sys; d=json.load(open("k.json")); assert d["calls"] > 0, d' ||
        fail "killed recording holds no call: $(head -c 400 k.json)"
    "$CLRR" dump killed.clrr >/dev/null 2>err || fail "clrr dump on a killed recording: $(cat err)"
fi
# a program that makes no OpenCL call: one line; in layer mode it names the
# other cause (an ICD loader that loads no layers) and --preload
"$CLRR" record -o none.clrr -- /bin/true 2>err || fail "clrr record -- /bin/true: exit $?"
[ "$(wc -l <err)" = 1 ] && grep -q "no trace written.*try --preload" err || fail "no-trace message: $(cat err)"
"$CLRR" record --preload -o none.clrr -- "$CLRR" --version >/dev/null 2>err ||   # a program of ours: an ASan layer preloads into it
    fail "clrr record --preload -- clrr --version: $(cat err)"
grep -q "no trace written" err && ! grep -q "try --preload" err || fail "no-trace message (--preload): $(cat err)"
# an ICD loader without layer support (CUDA's libOpenCL.so.1 is one; here
# CLRR_LOADER names a stand-in): the layer goes in with LD_PRELOAD, one line
# says so, and the trace is written all the same
printf 'an ICD loader that never reads the layer variable\n' >noloader.so
CLRR_LOADER=$T/noloader.so "$CLRR" record -o nl.clrr -- "$APP" --size 4096 --iters 1 --quiet 2>err ||
    fail "clrr record with a loader without layers: $(cat err)"
grep -q "^clrr: the OpenCL loader $T/noloader.so does not load layers (OPENCL_LAYERS); loading the layer into .* with LD_PRELOAD" err ||
    fail "loader without layers: $(cat err)"
"$CLRR" info nl.clrr | grep -q "(preload)" || fail "loader without layers: not recorded through LD_PRELOAD"
# the loader here loads layers: no such line
"$CLRR" record -o l.clrr -- "$APP" --size 4096 --iters 1 --quiet 2>err || fail "clrr record: $(cat err)"
! grep -q "does not load layers" err || fail "a loader with layers taken for one without: $(cat err)"
# device timing by command kind: a kind's first 16 commands are timed, then
# one at most every --timing-interval-us; 0 times every command. vecadd
# --iters 40 makes 4 kinds (two input writes, the kernel, the read-back),
# 40 commands each.
devtimes() { "$CLRR" dump --json "$1" | grep -c '"type":"devtime"'; }
"$CLRR" record --timing-interval-us=0 -o all.clrr -- "$APP" --size 1024 --iters 40 --quiet 2>err ||
    fail "record --timing-interval-us=0: $(cat err)"
[ "$(devtimes all.clrr)" = 160 ] || fail "--timing-interval-us=0: $(devtimes all.clrr) device times, want 160"
"$CLRR" record --timing-interval-us=1000000000 -o few.clrr -- "$APP" --size 1024 --iters 40 --quiet 2>err ||
    fail "record --timing-interval-us=1000000000: $(cat err)"
[ "$(devtimes few.clrr)" = 64 ] || fail "a long interval: $(devtimes few.clrr) device times, want 16 per kind (64)"
"$CLRR" info few.clrr | grep -q "^device .*(sampled: .* one per 1000000000 us)" || fail "info does not say timing was sampled"
"$CLRR" stats few.clrr | grep -Eq "^ +vecadd +40 .*\(16 timed\)" || fail "stats: $("$CLRR" stats few.clrr)"
"$CLRR" record -o def.clrr -- "$APP" --size 1024 --iters 40 --quiet 2>err || fail "record: $(cat err)"
n=$(devtimes def.clrr)
[ "$n" -ge 64 ] && [ "$n" -le 160 ] || fail "default timing: $n device times, want 64..160"
# stats count a queue's idle gap only between timed commands with no
# untimed one between them: nbody x40 launches past its 16th untimed, then
# the timed read-back; the device was busy in between, not idle
NB=$(dirname "$APP")/nbody
"$CLRR" record --timing-interval-us=1000000000 -o nbs.clrr -- "$NB" --size 256 --iters 40 --quiet 2>err ||
    fail "record nbody: $(cat err)"
"$CLRR" stats --json nbs.clrr >stats.json && "$CLRR" dump --json nbs.clrr >nbs.json || fail "stats/dump nbody"
python3 - stats.json nbs.json <<'PY' || fail "stats: a gap spans untimed commands"
import json, sys
s = json.load(open(sys.argv[1]))
items = [json.loads(l) for l in open(sys.argv[2])]
timed = {d["seq"] for d in items if d["type"] == "devtime"}
cmds = [d["seq"] for d in items if d["type"] == "call" and d["fn"].startswith("clEnqueue")]
untimed = [q for q in cmds if q not in timed]
assert len(untimed) >= 20 and s["queues"][0]["timed"] < s["queues"][0]["commands"], (len(untimed), s["queues"])
for g in s["top_gaps"]:
    assert not any(g["after_seq"] < q < g["before_seq"] for q in untimed), g
PY
CLRR_DEVICE_TIMING=0 "$CLRR" record -o off.clrr -- "$APP" --size 1024 --iters 4 --quiet 2>err || fail "record: $(cat err)"
[ "$(devtimes off.clrr)" = 0 ] && "$CLRR" info off.clrr | grep -q "(device timing off)" || fail "device timing off"
echo "ok: launcher, exit statuses, vecadd trace read back by info and dump, sampled device timing"
