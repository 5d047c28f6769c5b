#!/usr/bin/env bash
# ana_workloads.sh BUILD_DIR — the analysis commands on recorded workloads:
#  - sobel: the two gradient kernels are independent and both feed the
#    magnitude (RAW on gx and gy);
#  - jacobi: stencil and copy alternate: RAW stencil -> copy on b over the
#    stencil's written region (the interior), RAW copy -> next stencil on a,
#    WAR both ways; --collapse folds the iterations;
#  - clrr analyze --json: vecadd and blackscholes outputs are contiguous,
#    tiled matmul and histogram are not; spmv's x access is unknown and y
#    exact; under 2 s per workload (normal build);
#  - clrr timeline: a valid trace-event file (X events with ts/dur/pid/tid,
#    metadata, flows paired);
#  - clrr graph -o .svg renders; clrr stats --json counts match the trace;
#  - corrupt input (the fuzz corpus, cut traces): exit 0 or 3, one line.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
for a in sobel jacobi vecadd blackscholes matmul histogram spmv; do need "$APPS/$a"; done
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE
PY=python3
CORPUS=$(dirname "$0")/../fuzz-corpus/trace-format

rec() {   # rec NAME ARGS...
    local n=$1; shift
    "$CLRR" record -o "$TMP/$n.clrr" -- "$APPS/$n" "$@" --quiet >"$TMP/rec.out" 2>&1 ||
        fail "recording $n: $(tail -3 "$TMP/rec.out")"
}
rec sobel --size 64 --iters 2
rec jacobi --size 64 --iters 6
rec vecadd --size 4096 --iters 2
rec blackscholes --size 4096
rec matmul --size 64
rec histogram --size 65536
rec spmv --size 1024

analyzed() {   # the kernel analysis is loadable: its programs are analyzed
    "$CLRR" analyze --json "$TMP/vecadd.clrr" | $PY -c 'import json,sys; sys.exit(0 if all(p["analyzed"] for p in json.load(sys.stdin)["programs"]) else 1)'
}
ANALYZED=1
analyzed || ANALYZED=0

# ---------------------------------------------------------------- stats
for n in sobel jacobi vecadd blackscholes matmul histogram spmv; do
    "$CLRR" stats --json "$TMP/$n.clrr" >"$TMP/$n.stats" 2>"$TMP/err" || fail "clrr stats $n: $(cat "$TMP/err")"
    "$CLRR" stats "$TMP/$n.clrr" >/dev/null || fail "clrr stats $n (human)"
    launches=$("$CLRR" dump "$TMP/$n.clrr" | grep -c '^#[0-9]* \[t[0-9]*\] clEnqueueNDRangeKernel(')
    reads=$("$CLRR" dump "$TMP/$n.clrr" | grep -c '^#[0-9]* \[t[0-9]*\] clEnqueueReadBuffer(')
    $PY - "$TMP/$n.stats" "$launches" "$reads" <<'EOF' || fail "clrr stats --json $n does not match the trace"
import json, sys
d = json.load(open(sys.argv[1])); launches, reads = int(sys.argv[2]), int(sys.argv[3])
assert d["launches"] == launches, (d["launches"], launches)
assert sum(k["launches"] for k in d["kernels"]) == launches
r = [x for x in d["transfers"] if x["kind"] == "read"]
assert (r[0]["count"] if r else 0) == reads, (r, reads)
for k in d["kernels"]:
    assert k["timed"] <= k["launches"] and k["device_ns"]["min"] <= k["device_ns"]["max"], k
for q in d["queues"]:
    assert q["busy_ns"] <= q["span_ns"] and q["idle_ns"] == q["span_ns"] - q["busy_ns"], q
assert any(f["fn"] == "clEnqueueNDRangeKernel" and f["calls"] == launches for f in d["host_api"])
EOF
done

# ---------------------------------------------------------------- timeline
for n in sobel jacobi; do
    "$CLRR" timeline "$TMP/$n.clrr" -o "$TMP/$n.tl.json" 2>"$TMP/err" || fail "clrr timeline $n: $(cat "$TMP/err")"
    $PY - "$TMP/$n.tl.json" <<'EOF' || fail "the $n timeline is not a valid trace-event file"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
assert isinstance(ev, list) and ev
xs = [e for e in ev if e["ph"] == "X"]
for e in xs:
    for k in ("name", "ts", "dur", "pid", "tid"):
        assert k in e, (k, e)
    assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
    assert e["ts"] >= 0, e
meta = [e for e in ev if e["ph"] == "M"]
assert any(e["name"] == "process_name" and e["pid"] == 1 for e in meta)
assert any(e["name"] == "thread_name" for e in meta)
host = [e for e in xs if e["pid"] == 1]
dev = [e for e in xs if e["pid"] != 1]
assert host and dev, (len(host), len(dev))
assert all(e["args"]["device_time"] for e in dev if e["cat"].startswith("kernel")), "kernels without device time"
flows = {}
for e in ev:
    if e["ph"] in ("s", "f"):
        flows.setdefault(e["id"], []).append(e["ph"])
        assert "ts" in e and "pid" in e and "tid" in e, e
assert flows, "no flow events"
for i, p in flows.items():
    assert sorted(p) == ["f", "s"], (i, p)
EOF
done

# ---------------------------------------------------------------- graph: SVG
if command -v dot >/dev/null; then
    "$CLRR" graph "$TMP/sobel.clrr" -o "$TMP/sobel.svg" 2>"$TMP/err" || fail "clrr graph -o .svg: $(cat "$TMP/err")"
    "$CLRR" graph "$TMP/jacobi.clrr" -o "$TMP/jacobi.svg" --collapse || fail "clrr graph --collapse -o .svg"
    for f in sobel jacobi; do
        head -c 200 "$TMP/$f.svg" | grep -q '<?xml\|<svg' && grep -q '</svg>' "$TMP/$f.svg" || fail "$f.svg is not SVG"
    done
fi

# ---------------------------------------------------------------- jacobi folds
"$CLRR" graph "$TMP/jacobi.clrr" -o "$TMP/jc.json" --collapse || fail "clrr graph --collapse jacobi"
$PY - "$TMP/jc.json" <<'EOF' || fail "jacobi's iterations are not folded"
import json, sys
d = json.load(open(sys.argv[1]))
k = [n for n in d["nodes"] if n["kind"] == "kernel"]
assert [n["name"] for n in k] == ["jacobi", "copy"] and all(n["repeat"] == 6 for n in k), [(n["name"], n["repeat"]) for n in k]
assert any(e["carried"] for e in d["edges"])
EOF

# ---------------------------------------------------------------- corrupt input
check_bad() {   # check_bad FILE: every command exits 0 or 3 with at most one line
    local f=$1
    for sub in "stats" "stats --json" "graph -o $TMP/bad.json" "timeline -o $TMP/bad.tl.json" "analyze --json"; do
        rc=0
        # shellcheck disable=SC2086
        timeout 60 "$CLRR" $sub "$f" >"$TMP/out" 2>"$TMP/err" || rc=$?
        [ $rc -lt 124 ] || fail "clrr $sub $(basename "$f"): exit $rc: $(tail -3 "$TMP/err")"
        grep -q 'AddressSanitizer\|runtime error:' "$TMP/err" && fail "clrr $sub $(basename "$f"): $(head -5 "$TMP/err")"
        case $rc in
            0) ;;
            3) [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q "^clrr ${sub%% *}: " "$TMP/err" ||
                   fail "clrr $sub $(basename "$f"): exit 3 with: $(cat "$TMP/err")";;
            *) fail "clrr $sub $(basename "$f"): exit $rc: $(head -3 "$TMP/err")";;
        esac
    done
}
size=$(stat -c %s "$TMP/sobel.clrr")
for n in 16 $((size / 3)) $((size / 2)) $((size - 5)); do
    head -c "$n" "$TMP/sobel.clrr" >"$TMP/cut$n.clrr"
    check_bad "$TMP/cut$n.clrr"
done
head -c 16 "$TMP/sobel.clrr" >"$TMP/hdr.clrr"
rc=0; "$CLRR" stats "$TMP/hdr.clrr" 2>"$TMP/err" >/dev/null || rc=$?
[ $rc = 3 ] || fail "a trace cut in its header: exit $rc, not 3"
nf=0
for f in "$CORPUS"/*; do
    check_bad "$f"
    nf=$((nf + 1))
done
[ $nf -ge 10 ] || fail "only $nf files in $CORPUS"

# ---------------------------------------------------------------- analysis
[ $ANALYZED = 1 ] || skip "kernel analysis unavailable: sobel/jacobi regions and analyze checks skipped"

for n in vecadd blackscholes matmul histogram spmv sobel jacobi; do
    start=$(date +%s%N)
    "$CLRR" analyze --json "$TMP/$n.clrr" >"$TMP/$n.an.json" 2>"$TMP/err" || fail "clrr analyze $n: $(cat "$TMP/err")"
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "${CLRR_SAN:-0}" = 1 ] || [ $ms -lt 2000 ] || fail "clrr analyze $n took ${ms} ms (limit 2000)"
    "$CLRR" analyze "$TMP/$n.clrr" >/dev/null || fail "clrr analyze $n (human)"
done
$PY - "$TMP" <<'EOF' || exit 1
import json, sys, os
def kernels(n):
    d = json.load(open(os.path.join(sys.argv[1], n + ".an.json")))
    return {k["name"]: k for p in d["programs"] for k in p["kernels"]}
def contig(n, kernel, arg):
    k = kernels(n)[kernel]
    c = [c for c in k["contiguity"] if c["name"] == arg]
    assert c, "%s: %s has no contiguity for %s: %s" % (n, kernel, arg, k["contiguity"])
    return c[0]["linear"]
fails = []
def want(cond, msg):
    if not cond:
        fails.append(msg)
want(contig("vecadd", "vecadd", "c"), "vecadd's c is not contiguous")
want(contig("blackscholes", "blackscholes", "call") and contig("blackscholes", "blackscholes", "put"),
     "blackscholes's call/put are not contiguous")
want(not contig("matmul", "matmul", "c"), "tiled matmul's c is contiguous")
want(not contig("histogram", "hist_local", "partial"), "histogram's partial is contiguous")
sp = kernels("spmv")["spmv_csr"]
xa = [a for a in sp["accesses"] if a["arg_name"] == "x"]
ya = [a for a in sp["accesses"] if a["arg_name"] == "y"]
want(xa and all(not a["offset"]["known"] and a["offset"]["reason"] for a in xa), "spmv's x access is not unknown")
want(ya and all(a["offset"]["known"] for a in ya), "spmv's y access is not exact")
yr = [r for r in sp["regions"] if r["name"] == "y"]
want(yr and not yr[0]["write"]["whole"] and not yr[0]["write"]["empty"], "spmv's y write region is not exact: %s" % yr)
if fails:
    sys.exit("FAIL: " + "; ".join(fails))
EOF

# sobel: gx and gy kernels independent, both feed the magnitude
"$CLRR" graph "$TMP/sobel.clrr" -o "$TMP/s.json" || fail "clrr graph sobel"
$PY - "$TMP/s.json" <<'EOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
k = [n for n in d["nodes"] if n["kind"] == "kernel"][:3]
assert [n["name"] for n in k] == ["sobel_gx", "sobel_gy", "sobel_magnitude"], [n["name"] for n in k]
gx, gy, mag = (n["id"] for n in k)
E = [(e["from"], e["to"], e["kind"], e["object_name"]) for e in d["edges"]]
dep = [e for e in E if {e[0], e[1]} == {gx, gy}]
if dep:
    sys.exit("FAIL: sobel_gx and sobel_gy are not independent: %s" % dep)
for src, obj in ((gx, "gx"), (gy, "gy")):
    if (src, mag, "RAW", obj) not in E:
        sys.exit("FAIL: no RAW %s -> sobel_magnitude on %s: %s" % (src, obj, [e for e in E if e[1] == mag]))
EOF

# jacobi: stencil and copy alternate with the right regions
"$CLRR" graph "$TMP/jacobi.clrr" -o "$TMP/j.json" || fail "clrr graph jacobi"
$PY - "$TMP/j.json" 64 <<'EOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
k = [x for x in d["nodes"] if x["kind"] == "kernel"]
assert [x["name"] for x in k] == ["jacobi", "copy"] * 6, [x["name"] for x in k]
edges = {}
for e in d["edges"]:
    edges.setdefault((e["from"], e["to"]), []).append(e)
def one(a, b, kind, obj):
    m = [e for e in edges.get((a["id"], b["id"]), []) if e["kind"] == kind and e["object_name"] == obj]
    if len(m) != 1:
        sys.exit("FAIL: %s #%d -> %s #%d: no single %s on %s: %s" % (a["name"], a["id"], b["name"], b["id"], kind, obj,
                 edges.get((a["id"], b["id"]))))
    return m[0]
interior = (4 * (n + 1), 4 * (n * n - n - 1))   # b[y*n+x] for 1 <= x, y < n-1
for it in range(6):
    st, cp = k[2 * it], k[2 * it + 1]
    w = [r for r in st["mem"] if r["name"] == "b" and r["access"] in ("write", "rw")]
    if len(w) != 1 or (w[0]["lo"], w[0]["hi"]) != interior or w[0]["whole"]:
        sys.exit("FAIL: the stencil #%d writes %s of b, expected the interior %s" % (st["id"], w, interior))
    e = one(st, cp, "RAW", "b")
    if (e["lo"], e["hi"]) != interior or e["whole"]:
        sys.exit("FAIL: RAW stencil #%d -> copy #%d on b is [%d, %d), expected %s" % (st["id"], cp["id"], e["lo"], e["hi"], interior))
    one(st, cp, "WAR", "a")
    if it < 5:
        nx = k[2 * it + 2]
        e = one(cp, nx, "RAW", "a")
        if e["whole"]:
            sys.exit("FAIL: RAW copy -> stencil on a is a whole-buffer stand-in")
        one(cp, nx, "WAR", "b")
EOF
echo "ok: stats, timeline, SVG, folding, $nf corpus files, analysis and regions"
