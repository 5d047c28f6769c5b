#!/usr/bin/env bash
# replay_clients.sh BUILD_DIR — traces of real third-party clients replay:
# Debian's clinfo (hundreds of queries, contexts created from types that
# have no device here, no read-back) replays with exit 0; a small pyopencl
# program replays with exit 0 and its read-back verified. What is not
# installed is skipped (exit 77 when neither is).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES PYOPENCL_CTX
export PYOPENCL_NO_CACHE=1 PYOPENCL_COMPILER_OUTPUT=0
# Programs we did not build get the ASan runtime preloaded (through env, so
# that only the recorded program gets it) when the layer is an ASan build.
FOREIGN=()
if [ "${CLRR_SAN:-0}" = 1 ]; then
    rt=$(asan_rt)
    [ -f "$rt" ] || skip "no shared ASan runtime for programs we did not build"
    FOREIGN=(env "LD_PRELOAD=$rt")
fi
PY=/usr/bin/python3
tested=()

# replay NAME: replays NAME.clrr with --json (exit 0, nothing on stderr) and
# writes the summary's "readbacks mismatches unverified calls" to NAME.sum
replay() {
    local rc=0
    "$CLRR" replay --json "$TMP/$1.clrr" >"$TMP/$1.json" 2>"$TMP/$1.err" || rc=$?
    [ $rc -eq 0 ] || fail "$1: clrr replay: exit $rc: $(head -3 "$TMP/$1.err")"
    [ ! -s "$TMP/$1.err" ] || fail "$1: clrr replay wrote to stderr: $(head -3 "$TMP/$1.err")"
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["ok"] is True, d
print(d["readbacks"], d["mismatches"], d["unverified"], d["calls"])' "$TMP/$1.json" >"$TMP/$1.sum" ||
        fail "$1: clrr replay --json does not parse or is not ok: $(cat "$TMP/$1.json")"
}

# --- clinfo
if CLINFO=$(command -v clinfo) && "${FOREIGN[@]}" "$CLINFO" 2>/dev/null | grep -q "Number of devices"; then
    "$CLRR" record -o "$TMP/clinfo.clrr" -- "${FOREIGN[@]}" "$CLINFO" >"$TMP/clinfo.out" 2>"$TMP/clinfo.rec" ||
        fail "clrr record -- clinfo: $(tail -3 "$TMP/clinfo.rec")"
    replay clinfo
    read -r rb mm uv calls <"$TMP/clinfo.sum"
    [ "$rb" -eq 0 ] && [ "$mm" -eq 0 ] && [ "$uv" -eq 0 ] ||
        fail "clinfo: $rb read-backs, $mm mismatches, $uv unverified (it reads nothing back)"
    [ "$calls" -gt 100 ] || fail "clinfo: only $calls calls replayed"
    # contexts that a failed clCreateContextFromType still returned (PoCL) are
    # bound and released as recorded: every call answers as it did
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["call_diffs"] == 0, d["call_diffs"]' \
        "$TMP/clinfo.json" || fail "clinfo: calls answered differently: $(cat "$TMP/clinfo.json")"
    tested+=("clinfo ($calls calls)")
fi

# --- pyopencl
if $PY -c 'import numpy, pyopencl' 2>/dev/null; then
    cat >"$TMP/vadd.py" <<'EOF'
import numpy as np
import pyopencl as cl

devs = [d for p in cl.get_platforms() for d in p.get_devices(device_type=cl.device_type.CPU)]
ctx = cl.Context([devs[0]])
queue = cl.CommandQueue(ctx)
n = 4096
a = np.arange(n, dtype=np.float32)
b = np.arange(n, dtype=np.float32) * 0.5
mf = cl.mem_flags
a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
b_buf = cl.Buffer(ctx, mf.READ_ONLY, b.nbytes)
c_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
cl.enqueue_copy(queue, b_buf, b)
prg = cl.Program(ctx, """
__kernel void vadd(__global const float *a, __global const float *b, __global float *c)
{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i] * 3.0f;
}
""").build()
prg.vadd(queue, (n,), None, a_buf, b_buf, c_buf)
c = np.empty_like(a)
cl.enqueue_copy(queue, c, c_buf)
queue.finish()
print("correct:", bool(np.array_equal(c, a + b * 3)))
EOF
    if "${FOREIGN[@]}" $PY "$TMP/vadd.py" >"$TMP/plain.out" 2>&1 && grep -q "correct: True" "$TMP/plain.out"; then
        "$CLRR" record -o "$TMP/pyopencl.clrr" -- "${FOREIGN[@]}" $PY "$TMP/vadd.py" >"$TMP/py.out" 2>"$TMP/py.rec" ||
            fail "clrr record -- python3 vadd.py: $(tail -3 "$TMP/py.rec")"
        grep -q "correct: True" "$TMP/py.out" || fail "vadd.py under clrr record: $(cat "$TMP/py.out")"
        replay pyopencl
        read -r rb mm uv calls <"$TMP/pyopencl.sum"
        [ "$rb" -gt 0 ] || fail "pyopencl: no read-back verified"
        [ "$mm" -eq 0 ] && [ "$uv" -eq 0 ] || fail "pyopencl: $mm mismatches, $uv unverified read-backs"
        tested+=("pyopencl ($rb read-backs)")
    fi
fi

[ ${#tested[@]} -gt 0 ] || skip "neither clinfo nor a working pyopencl is installed"
echo "ok: replayed ${tested[*]}"
