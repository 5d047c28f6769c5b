#!/usr/bin/env bash
# profile.sh BUILD_DIR — `clrr profile` (issue 8, cost learning) on PoCL's
# unequal pair (basic: one thread, pthread: every core): a compute-bound
# workload (ep) measured on both devices lands in the cost database as
# kernel samples for both identities, with the launch's key (program hash,
# kernel, dim, sizes) and work-group counts of the ladder, transfer
# samples both ways for both devices, and a snapshot of the 2 devices;
# --json gives non-empty, positive curves; a second run appends; --devices
# 1 measures on one device only. The program hash is the one `clrr
# optimize` keys its plans with (the plan's programs, the source blob's
# hash in `clrr dump`): equal for two recordings of one workload, different
# for another workload. A replay that differs (on the stub driver, which
# runs no kernel) exits 1 and its samples are still added. Bad devices,
# bad options and corrupt databases: one line, exit 2 or 3, nothing added.
# --tolerance compares the replay's read-backs as `clrr replay` does.
# Which device is faster is not asserted (two loaded cores).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/ep"; need "$APPS/nbody"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS CLRR_APP_DEVICE
export POCL_DEVICES="basic pthread"
export CLRR_COSTS=$TMP/costs   # never this machine's database
PY=/usr/bin/python3
DB=$CLRR_COSTS

rec() {   # rec OUT APP ARGS...
    local out=$1 app=$2; shift 2
    "$CLRR" record -o "$out" -- "$APPS/$app" "$@" --device 1 --quiet >"$TMP/rec.out" 2>&1 ||
        fail "clrr record -- $app: $(tail -3 "$TMP/rec.out")"
}
rec "$TMP/ep.clrr" ep --size=2048
rec "$TMP/ep2.clrr" ep --size=2048
rec "$TMP/nbody.clrr" nbody --size=256 --iters=2

# --- ep on both devices, the database file and the JSON
"$CLRR" profile "$TMP/ep.clrr" --reps 3 --json >"$TMP/p1.json" 2>"$TMP/p1.err" ||
    fail "clrr profile ep: exit $?: $(cat "$TMP/p1.err")"
[ -s "$TMP/p1.err" ] && fail "clrr profile ep wrote on stderr: $(cat "$TMP/p1.err")"
"$CLRR" dump --json "$TMP/ep.clrr" >"$TMP/ep.dump" || fail "clrr dump ep"
# the file: "clrr-costs 1", then s (snapshot) + d (its devices), x
# (transfers: identity, dir, bytes, ns, time) and k (kernels: identity,
# program, kernel, dim, gsz, lsz, groups, ns, time) records, tab-separated
$PY - "$DB" "$TMP/p1.json" "$TMP/ep.dump" <<'EOF' || fail "the database or JSON after profiling ep"
import json, sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
assert lines[0] == ["clrr-costs", "1"], lines[0]
d = json.load(open(sys.argv[2]))
calls = [c for c in map(json.loads, open(sys.argv[3])) if c.get("type") == "call"]
src = [c for c in calls if c["fn"] == "clCreateProgramWithSource"]
launch = [c for c in calls if c["fn"] == "clEnqueueNDRangeKernel"]
assert len(src) == 1 and len(launch) == 1, (len(src), len(launch))
lw = launch[0]["args"]["local_work_size"]
snap = [l for l in lines if l[0] == "d"]
assert len([l for l in lines if l[0] == "s"]) == 1 and len(snap) == 2, snap
ids = [l[3] for l in snap]
assert ids[0] != ids[1] and "basic" in ids[0] and "pthread" in ids[1], ids
ks = [l for l in lines if l[0] == "k"]
xs = [l for l in lines if l[0] == "x"]
for i in ids:
    k = [l for l in ks if l[1] == i]
    assert len(k) >= 6, (i, len(k))     # at least two work-group counts, 3 runs each
    assert len({tuple(l[2:7]) for l in k}) == 1, "one key"
    prog, kern, dim, gsz, lsz = k[0][2:7]
    assert kern == "ep" and dim == "1" and gsz == "2048,1,1", k[0]
    assert lsz == ("%d,1,1" % lw[0] if lw else "0,0,0"), (lsz, lw)
    assert prog == src[0]["args"]["strings"]["blob"], ("the program hash is the source blob's", prog)
    L = lw[0] if lw else 1
    G = -(-2048 // L)
    groups = sorted({int(l[7]) for l in k})
    ladder = {G, 3 * G // 4, G // 2, G // 4, G // 8, G // 16, G // 32, 1} - {0}
    assert set(groups) <= ladder and G in groups and 1 in groups, (groups, ladder)
    assert all(int(l[8]) > 0 for l in k)
    x = [l for l in xs if l[1] == i]
    for dr in ("h2d", "d2h"):
        sizes = {int(l[3]) for l in x if l[2] == dr}
        assert {4096, 65536, 1 << 20} <= sizes, (i, dr, sizes)
        assert len([l for l in x if l[2] == dr and l[3] == "4096"]) == 3
assert d["ok"] is True and d["replay"]["mismatches"] == 0 and d["replay"]["readbacks"] > 0, d["replay"]
assert d["launches_measured"] == 1 and d["launches_skipped"] == 0, d
assert d["samples_added"] == len(ks) + len(xs) == d["kernel_samples"] + d["xfer_samples"], (d["samples_added"], len(ks), len(xs))
assert [v["identity"] for v in d["devices"]] == ids and [v["spec"] for v in d["devices"]] == ["0", "1"]
for v in d["devices"]:
    assert len(v["kernels"]) == 1, v
    c = v["kernels"][0]
    assert c["kernel"] == "ep" and c["program"] == ks[0][2] and c["global"] == [2048], c
    assert c["points"] and all(p["ns"] > 0 and p["samples"] >= 3 and p["groups"] >= 1 for p in c["points"]), c
    assert c["full_ns"] > 0 and c["ns_per_group"] > 0 and c["groups"] == max(int(l[7]) for l in ks)
    for dr in ("h2d", "d2h"):   # trusted once two sizes have 3 samples left, outliers rejected
        assert v[dr] is None or (v[dr]["gbps"] > 0 and v[dr]["latency_ns"] >= 0), (dr, v[dr])
EOF
H_EP=$($PY -c 'import sys; print([l.split("\t")[2] for l in open(sys.argv[1]) if l.startswith("k\t")][0])' "$DB")

# the hash `clrr optimize` keys the program with
if "$CLRR" optimize "$TMP/ep.clrr" -o "$TMP/ep.plan" --passes none >"$TMP/opt.out" 2>&1; then
    $PY -c 'import json, sys; p = json.load(open(sys.argv[1]))["trace"]["programs"]; assert p == [sys.argv[2]], (p, sys.argv[2])' \
        "$TMP/ep.plan" "$H_EP" || fail "the plan's program hash is not the profile's"
else
    echo "note: clrr optimize failed, the plan's hash is not compared: $(tail -1 "$TMP/opt.out")"
fi

# --- a second run appends; the human tables
n0=$(grep -c '^k' "$DB")
"$CLRR" profile "$TMP/ep.clrr" --reps 3 >"$TMP/p2.out" 2>"$TMP/p2.err" || fail "second run: $(cat "$TMP/p2.err")"
n1=$(grep -c '^k' "$DB")
[ "$n1" -ge $((n0 + 6)) ] || fail "a second run did not append kernel samples ($n0 -> $n1)"
grep -q "^[0-9][0-9]* samples added to $DB\$" "$TMP/p2.out" || fail "no 'samples added' line: $(cat "$TMP/p2.out")"
[ "$(grep -c '^s' "$DB")" = 2 ] || fail "the second run's snapshot"
grep -q '^ *ep  *2048/[0-9]*  ' "$TMP/p2.out" || fail "no table row for ep: $(cat "$TMP/p2.out")"
[ "$(grep -c '^device ' "$TMP/p2.out")" = 2 ] || fail "two devices in the table: $(cat "$TMP/p2.out")"
grep -q '^ *transfers to device .*, from device ' "$TMP/p2.out" || fail "transfers: $(cat "$TMP/p2.out")"

# --- --devices 1: one identity; the same workload recorded twice has one
# hash, another workload another
"$CLRR" profile "$TMP/nbody.clrr" --devices 1 --reps 3 --json >"$TMP/p3.json" 2>"$TMP/p3.err" ||
    fail "--devices 1: $(cat "$TMP/p3.err")"
"$CLRR" profile "$TMP/ep2.clrr" --devices pthread --reps 3 --launches 2 >/dev/null 2>"$TMP/p4.err" ||
    fail "ep2: $(cat "$TMP/p4.err")"
$PY - "$DB" "$TMP/p3.json" "$H_EP" <<'EOF' || fail "--devices 1 or the program hashes"
import json, sys
ks = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.startswith("k\t")]
d = json.load(open(sys.argv[2]))
nb = [l for l in ks if l[3] == "nbody_step"]
assert nb and len({l[1] for l in nb}) == 1 and "pthread" in nb[0][1], {l[1] for l in nb}
assert len(d["devices"]) == 1 and d["devices"][0]["spec"] == "1", d["devices"]
assert {l[2] for l in nb} != {sys.argv[3]} and len({l[2] for l in nb}) == 1, "nbody has a hash of its own"
ep = {l[2] for l in ks if l[3] == "ep"}
assert ep == {sys.argv[3]}, ("two recordings of ep, one hash", ep)
EOF

# --- launches that cannot be measured are skipped with a note (api_tour:
# an image argument, an SVM pointer, a program from a binary); the rest are.
# On PoCL's default device (api_tour does not finish on "basic pthread")
if [ -x "$B/tests/progs/api_tour" ]; then
    env -u POCL_DEVICES timeout 60 "$CLRR" record -o "$TMP/tour.clrr" -- "$B/tests/progs/api_tour" --quiet \
        >"$TMP/rec.out" 2>&1 || fail "clrr record -- api_tour: $(tail -3 "$TMP/rec.out")"
    env -u POCL_DEVICES timeout 60 "$CLRR" profile "$TMP/tour.clrr" --devices 0 --reps 3 --costs "$TMP/tour.costs" \
        >"$TMP/t.out" 2>"$TMP/t.err" || fail "api_tour: $(cat "$TMP/t.err")"
    for why in "argument 0 is an image" "was not set with clSetKernelArg" "not made from source"; do
        grep -q "^note .*skipped: .*$why" "$TMP/t.out" || fail "api_tour: no note '$why': $(cat "$TMP/t.out")"
    done
    grep -q '^profiled .* [1-9][0-9]* measured, [1-9][0-9]* skipped' "$TMP/t.out" || fail "api_tour: $(cat "$TMP/t.out")"
fi

# --- errors: one line, exit 2 (command line) or 3 (files), nothing added
lines0=$(wc -l <"$DB")
err1() {   # err1 RC WHAT CMD...: exit RC, exactly one line on stderr
    local want=$1 what=$2 rc=0; shift 2
    "$@" >"$TMP/e.out" 2>"$TMP/e.err" || rc=$?
    [ $rc -eq "$want" ] || fail "$what: exit $rc, not $want: $(cat "$TMP/e.err")"
    [ "$(wc -l <"$TMP/e.err")" = 1 ] || fail "$what: not one line on stderr: $(cat "$TMP/e.err")"
}
err1 2 "--devices 7" "$CLRR" profile "$TMP/ep.clrr" --devices 7
grep -q -- '--devices 7' "$TMP/e.err" || fail "--devices 7: $(cat "$TMP/e.err")"
err1 2 "--devices 0,nosuch" "$CLRR" profile "$TMP/ep.clrr" --devices 0,nosuch
err1 2 "--device 9" "$CLRR" profile "$TMP/ep.clrr" --device 9
err1 2 "--reps 0" "$CLRR" profile "$TMP/ep.clrr" --reps 0
err1 2 "--max-seconds x" "$CLRR" profile "$TMP/ep.clrr" --max-seconds x
err1 2 "--tolerance x" "$CLRR" profile "$TMP/ep.clrr" --tolerance x
err1 2 "no file" "$CLRR" profile
err1 3 "a missing trace" "$CLRR" profile "$TMP/missing.clrr"
head -c 300 "$TMP/ep.clrr" >"$TMP/cut.clrr"
err1 3 "a cut trace" "$CLRR" profile "$TMP/cut.clrr"
[ "$(wc -l <"$DB")" = "$lines0" ] || fail "a failed run added to the database"
printf 'not a cost database\n' >"$TMP/bad1"
err1 3 "a corrupt database" "$CLRR" profile "$TMP/ep.clrr" --costs "$TMP/bad1"
{ head -3 "$DB"; printf 'k\tbroken record\n'; tail -2 "$DB"; } >"$TMP/bad2"
err1 3 "a database with a broken line" "$CLRR" profile "$TMP/ep.clrr" --costs "$TMP/bad2"
grep -q "bad2:4" "$TMP/e.err" || fail "the broken line is not named: $(cat "$TMP/e.err")"

# --- a replay that differs (the stub driver runs no kernel) still adds its samples
STUBV=$B/stub-vendors
if [ -f "$STUBV/clrrstub.icd" ] && [ -f /etc/OpenCL/vendors/pocl.icd ]; then
    mkdir -p "$TMP/both"
    cp "$STUBV/clrrstub.icd" /etc/OpenCL/vendors/pocl.icd "$TMP/both/"
    rc=0
    OCL_ICD_VENDORS=$TMP/both "$CLRR" profile "$TMP/ep.clrr" --device stub --devices pthread --reps 3 \
        --costs "$TMP/stub.costs" >"$TMP/s.out" 2>"$TMP/s.err" || rc=$?
    [ $rc -eq 1 ] || fail "a differing replay: exit $rc, not 1: $(cat "$TMP/s.err" "$TMP/s.out")"
    grep -q '^MISMATCH' "$TMP/s.out" || fail "no MISMATCH: $(cat "$TMP/s.out")"
    [ "$(grep -c '^k' "$TMP/stub.costs")" -ge 6 ] || fail "the differing replay's samples were not added"
    [ "$(grep -c '^d' "$TMP/stub.costs")" = 3 ] || fail "the snapshot lists every device (2 PoCL + stub)"
    # within a tolerance (here one nothing exceeds) the same replay matches
    OCL_ICD_VENDORS=$TMP/both "$CLRR" profile "$TMP/ep.clrr" --device stub --devices pthread --reps 3 \
        --costs "$TMP/stub.costs" --tolerance abs=1e30 >"$TMP/s.out" 2>"$TMP/s.err" ||
        fail "--tolerance: exit $?: $(cat "$TMP/s.err" "$TMP/s.out")"
    grep -q '^MISMATCH' "$TMP/s.out" && fail "--tolerance: still a MISMATCH: $(cat "$TMP/s.out")"
fi
exit 0
