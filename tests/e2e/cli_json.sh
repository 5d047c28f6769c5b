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
# whose "schema" or a required member is wrong (the check can fail).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/vecadd"
B=$(cd "$B" && pwd); CLRR=$B/bin/clrr; APPS=$B/apps
S=$(cd "$(dirname "$0")/../../docs/schemas" && pwd)
G=$(cd "$(dirname "$0")/../../traces" && pwd)
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
