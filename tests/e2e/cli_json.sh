#!/usr/bin/env bash
# cli_json.sh BUILD_DIR — every JSON output of clrr against its schema
# (docs/json.md, docs/schemas/NAME.json): traces recorded here on the real
# driver (vecadd; sobel, which the optimizer fuses) and the golden traces go
# through info, dump, stats, graph, replay (plain, --compare, --plan),
# trim, diff, devices, analyze, profile, optimize, plan show and run
# --report, and `info DIR` and DIR/index.json of a recording of a process
# tree; each output must carry "schema": "clrr-NAME/1" (plans: "format":
# "clrr-plan") and validate (python3-jsonschema, draft 2020-12). Each
# schema file must itself be a valid schema, and must reject an output
# whose "schema" or a required member is wrong (the check can fail). A
# program of its own puts UTF-8 and bytes that are not UTF-8 into a kernel
# name, build options and a path: graph, timeline, info and dump keep the
# UTF-8 and write U+FFFD for the rest.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/vecadd"
B=$(cd "$B" && pwd); CLRR=$B/bin/clrr; APPS=$B/apps
S=$(cd "$(dirname "$0")/../../docs/schemas" && pwd)
G=$(cd "$(dirname "$0")/../../traces" && pwd)
CORRUPT=$(cd "$(dirname "$0")/../corrupt" && pwd)
PY=/usr/bin/python3
$PY -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"
cd "$TMP" || exit 1
export CLRR_COSTS=$TMP/costs

r() {   # r OUT CMD ARGS...: clrr CMD ARGS > OUT, which must succeed (replay: 0 or 1)
    local out=$1 rc=0; shift
    "$CLRR" "$@" >"$out" 2>"$TMP/err" || rc=$?
    [ $rc = 0 ] || { [ "$1" = diff ] && [ $rc = 1 ]; } || fail "clrr $*: exit $rc: $(tail -3 "$TMP/err")"
}
"$CLRR" record -o v.clrr -- "$APPS/vecadd" --size 4096 --iters 2 --quiet >/dev/null 2>&1 || fail "record vecadd"
"$CLRR" record -o s.clrr -- "$APPS/sobel" --size 64 --iters 2 --quiet >/dev/null 2>&1 || fail "record sobel"
"$CLRR" record -o set/ -- "$APPS/vecadd" --size 1024 --iters 1 --quiet >/dev/null 2>&1 || fail "record -o set/"
checks=()
add() { checks+=("$1=$2"); }
for t in v.clrr s.clrr "$G/api_tour-pocl.clrr" "$G/image_map.h200.clrr"; do
    n=$(basename "$t" .clrr)
    r "info.$n.json" info --json "$t"; add info "info.$n.json"
    r "dump.$n.jsonl" dump --json "$t"; add dump "dump.$n.jsonl"
    [ "$n" != api_tour-pocl ] || continue   # its kernels: what the others have
    r "stats.$n.json" stats --json "$t"; add stats "stats.$n.json"
    r "analyze.$n.json" analyze --json "$t"; add analyze "analyze.$n.json"
    "$CLRR" graph "$t" -o "graph.$n.json" 2>"$TMP/err" || fail "graph $n: $(cat "$TMP/err")"; add graph "graph.$n.json"
done
for n in v s; do
    r "replay.$n.json" replay --json "$n.clrr"; add replay "replay.$n.json"
    r "trim.$n.json" trim --json --range 1:30 "$n.clrr" -o "trim.$n.clrr"; add trim "trim.$n.json"
done
r profile.v.json profile --json v.clrr; add profile profile.v.json
r replay.cmp.json replay --json --compare cpu v.clrr; add replay replay.cmp.json
r replay.timing.json replay --json --timing v.clrr; add replay replay.timing.json
r diff.vs.json diff --json v.clrr s.clrr; add diff diff.vs.json
r diff.vv.json diff --json v.clrr v.clrr; add diff diff.vv.json
r devices.json devices --json; add devices devices.json
r show.v.json show --json v.clrr; add show show.v.json
r show.err.json show --json v.clrr errors; add show show.err.json
r optimize.s.json optimize --json s.clrr -o s.plan; add optimize optimize.s.json
r plan.s.json plan show --json s.plan; add plan plan.s.json
add plan s.plan
r replay.plan.json replay --json --plan s.plan s.clrr; add replay replay.plan.json
"$CLRR" run --plan s.plan --report run.json -- "$APPS/sobel" --size 64 --iters 2 --quiet >/dev/null 2>"$TMP/err" ||
    fail "run --report: $(tail -3 "$TMP/err")"
add run-report run.json
r infoset.json info --json set; add info-set infoset.json
# mismatches (the stub driver computes nothing): the list jansson writes
if [ -d "$B/stub-vendors" ]; then
    rc=0; OCL_ICD_VENDORS=$B/stub-vendors "$CLRR" replay --json v.clrr >replay.stub.json 2>"$TMP/err" || rc=$?
    [ $rc = 1 ] || fail "replay on the stub driver: exit $rc, expected 1: $(tail -3 "$TMP/err")"
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); m = d["mismatch_list"]
assert m and all(x["function"] == "clEnqueueReadBuffer" and x["written_by"].startswith("vecadd (#") for x in m), m' replay.stub.json ||
        fail "replay --json on the stub: mismatch_list: $(head -c 400 replay.stub.json)"
    add replay replay.stub.json
fi
add record-index set/index.json

# recorded values past 2^63 inside a jansson document (info's ENV members
# and platforms: cli_json_recorded) come out exact: v.clrr with its ENV's
# pid and ppid made 2^64-1 and 2^63+5 (tests/corrupt/make.py
# edits the records, fuzz-pack writes the trace again)
if [ -x "$B/tests/fuzz-pack" ]; then
    $PY - "$B" "$CORRUPT" <<'PEOF' || fail "making a trace with values past 2^63"
import sys
sys.path.insert(0, sys.argv[2])
import make
def big(r):
    if isinstance(r, list) and r and r[0] == 0 and isinstance(r[1], dict):
        r[1]["pid"] = 2**64 - 1
        r[1]["ppid"] = 2**63 + 5
    return r
make.Sections(sys.argv[1], trace="v.clrr", out_dir=".").edit_records("big.clrr", big)
PEOF
    r info.big.json info --json big.clrr; add info info.big.json
    $PY -c 'import json, sys; d = json.load(open(sys.argv[1]))
assert d["pid"] == 2**64 - 1 and d["ppid"] == 2**63 + 5, (d["pid"], d["ppid"])
assert d["platforms"][0]["devices"], d["platforms"]
assert "\u0001" not in open(sys.argv[1]).read()' info.big.json || fail "info --json: values past 2^63 not exact: $(head -c 300 info.big.json)"
fi

# strings of a trace that are not ASCII: a kernel named in UTF-8, built with
# options holding UTF-8 and bytes that are not UTF-8, from a directory whose
# name has both. Every writer (clrr's and the analyzer's graph and
# timeline) is jansson after tf_utf8_fix(): UTF-8 kept, a bad byte U+FFFD.
command -v cc >/dev/null || skip "no C compiler for the UTF-8 program"
cat >u8.c <<'CEOF'
#include <CL/cl.h>
int main(void)
{
    cl_platform_id pl; cl_device_id d; cl_int e;
    if (clGetPlatformIDs(1, &pl, NULL) || clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return 2;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
    const char *src = "__kernel void k\xc3\xa9rnel_\xce\xbb(__global float *a) { a[get_global_id(0)] *= 2.0f; }";
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    if (clBuildProgram(p, 1, &d, "-DTAG=caf\xc3\xa9 -DJUNK=\xff\xfe", NULL, NULL))
        return 3;
    cl_kernel k = clCreateKernel(p, "k\xc3\xa9rnel_\xce\xbb", &e);
    if (e)
        return 4;
    float a[64];
    for (int i = 0; i < 64; i++)
        a[i] = (float)i;
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof a, a, &e);
    size_t g = 64;
    clSetKernelArg(k, 0, sizeof b, &b);
    clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL);
    return a[3] == 6.0f ? 0 : 5;
}
CEOF
u8dir=$(printf 'd\303\274_\377')
mkdir -p "$u8dir" && cc -DCL_TARGET_OPENCL_VERSION=300 -o "$u8dir/u8" u8.c -lOpenCL || fail "compiling u8.c"
FOREIGN=()   # a program not built with the sanitizer: its runtime for the SAN layer
if [ -n "$(asan_rt)" ]; then FOREIGN=(env "LD_PRELOAD=$(asan_rt)"); fi
"$CLRR" record -o u8.clrr -- "${FOREIGN[@]}" "./$u8dir/u8" >/dev/null 2>"$TMP/err" || fail "record u8: $(tail -3 "$TMP/err")"
r info.u8.json info --json u8.clrr; add info info.u8.json
r dump.u8.jsonl dump --json u8.clrr; add dump dump.u8.jsonl
r stats.u8.json stats --json u8.clrr; add stats stats.u8.json
"$CLRR" graph u8.clrr -o graph.u8.json 2>"$TMP/err" || fail "graph u8: $(cat "$TMP/err")"; add graph graph.u8.json
"$CLRR" timeline u8.clrr -o tl.u8.json 2>"$TMP/err" || fail "timeline u8: $(cat "$TMP/err")"
$PY - <<'PEOF' || fail "UTF-8 in graph/timeline/info/dump JSON"
import json
K, O = "k\u00e9rnel_\u03bb", "-DTAG=caf\u00e9 -DJUNK=\ufffd\ufffd"
g = json.load(open("graph.u8.json"))
assert [o["options"] for o in g["objects"] if o["kind"] == "program"] == [O], g["objects"]
assert K in [o["name"] for o in g["objects"] if o["kind"] == "kernel"], g["objects"]
assert K in [n["name"] for n in g["nodes"] if n["fn"] == "clEnqueueNDRangeKernel"], g["nodes"]
t = json.load(open("tl.u8.json"))
ev = t["traceEvents"] if isinstance(t, dict) else t
assert any(e.get("cat") == "kernel" and e["name"] == K for e in ev), "no kernel slice named %r" % K
assert any(e.get("name") == "clBuildProgram" and e["args"]["params"]["options"] == O for e in ev), "clBuildProgram options"
info = json.load(open("info.u8.json"))
assert "/d\u00fc_\ufffd/u8" in json.dumps(info, ensure_ascii=False), "info: the command's path"
dump = [json.loads(l) for l in open("dump.u8.jsonl")]
assert any(K in json.dumps(d, ensure_ascii=False) for d in dump) and any(O in json.dumps(d, ensure_ascii=False) for d in dump), "dump"
PEOF

$PY - "$S" "${checks[@]}" <<'EOF'
import copy, json, os, sys
import jsonschema
sdir, checks = sys.argv[1], sys.argv[2:]
schemas = {}
for f in sorted(os.listdir(sdir)):
    s = json.load(open(os.path.join(sdir, f)))
    jsonschema.Draft202012Validator.check_schema(s)
    schemas[f[:-5]] = jsonschema.Draft202012Validator(s)
seen = set()
n = 0
for c in checks:
    name, path = c.split("=", 1)
    if name not in schemas:
        sys.exit("FAIL: no docs/schemas/%s.json" % name)
    seen.add(name)
    text = open(path).read()
    docs = [json.loads(l) for l in text.splitlines() if l.strip()] if path.endswith(".jsonl") else [json.loads(text)]
    if not docs:
        sys.exit("FAIL: %s is empty" % path)
    for d in docs:
        if name == "plan":
            if d.get("format") != "clrr-plan":
                sys.exit("FAIL: %s: format %r, expected clrr-plan" % (path, d.get("format")))
        elif d.get("schema") != "clrr-%s/1" % name:
            sys.exit("FAIL: %s: schema %r, expected clrr-%s/1" % (path, d.get("schema"), name))
        errs = sorted(schemas[name].iter_errors(d), key=lambda e: list(e.path))
        if errs:
            e = errs[0]
            sys.exit("FAIL: %s against %s.json: %s at %s" % (path, name, e.message[:300], "/".join(map(str, e.path))))
        n += 1
    # the schema can fail: a wrong schema name, a required member removed
    d = copy.deepcopy(docs[0])
    key = "format" if name == "plan" else "schema"
    d[key] = "clrr-other/9"
    if schemas[name].is_valid(d):
        sys.exit("FAIL: %s.json accepts %s = clrr-other/9" % (name, key))
    req = [k for k in schemas[name].schema.get("required", []) if k != key]
    if req:
        d = copy.deepcopy(docs[0])
        del d[req[-1]]
        if schemas[name].is_valid(d):
            sys.exit("FAIL: %s.json accepts an output without %s" % (name, req[-1]))
unused = set(schemas) - seen
if unused:
    sys.exit("FAIL: schemas no output was checked against: %s" % ", ".join(sorted(unused)))
print("ok: %d JSON outputs of %d kinds valid against docs/schemas" % (n, len(seen)))
EOF
