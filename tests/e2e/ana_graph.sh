#!/usr/bin/env bash
# ana_graph.sh BUILD_DIR — `clrr graph` on tests/progs/helium, whose
# dependencies are known by construction (see the comment at the top of
# helium.c): the JSON's edges must be exactly the expected ones, with their
# kinds, objects, byte ranges and "implied" flags; --range keeps only the
# edges inside the range; --collapse, DOT and SVG are well-formed. Without
# the kernel analysis (libclrr-ana.so) the edges that do not depend on
# kernel regions are checked and the rest is skipped (exit 77).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"; need "$B/tests/progs/helium"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE
T=$TMP/h.clrr
"$CLRR" record -o "$T" -- "$B/tests/progs/helium" >"$TMP/rec.out" 2>&1 || fail "recording helium: $(tail -3 "$TMP/rec.out")"
"$CLRR" graph "$T" -o "$TMP/h.json" 2>"$TMP/err" || fail "clrr graph: $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "clrr graph wrote to stderr: $(cat "$TMP/err")"

python3 - "$TMP/h.json" <<'EOF' || exit $?
import json, sys
d = json.load(open(sys.argv[1]))
nodes = d["nodes"]
letters = "abcdefghijklmnotpqrs"          # call order in helium.c
kinds = ["kernel"] * 5 + ["read", "write", "kernel", "kernel", "marker", "read", "wait", "write",
         "finish", "kernel", "barrier", "finish", "write", "set_event", "finish"]
got = [n["kind"] for n in nodes]
if got != kinds:
    sys.exit("FAIL: node kinds %s, expected %s" % (got, kinds))
N = dict(zip(letters, nodes))
seq = {l: n["id"] for l, n in N.items()}
name = {n["id"]: l for l, n in N.items()}
want_k = dict(a="fill_lo", b="fill_lo", c="scale_lo", d="sum", e="fill_hi", h="copy", i="fill_lo", o="fill_lo")
for l, k in want_k.items():
    if N[l]["name"] != k:
        sys.exit("FAIL: node %s (#%d) is %r, expected kernel %s" % (l, seq[l], N[l]["name"], k))
def root(l, access=None):
    m = [r for r in N[l]["mem"] if access is None or r["access"] in (access, "rw")]
    if not m:
        sys.exit("FAIL: node %s has no memory %s" % (l, access or ""))
    return m[0]["root"]
X, Y, W, V, U = root("a"), root("f"), root("g"), root("k"), root("i")
sub = N["b"]["mem"][0]
if sub["object"] == X or sub["root"] != X or sub["lo"] != 4096:
    sys.exit("FAIL: the sub-buffer of b is not resolved to x + 4096: %s" % sub)
ev = {l: N[l]["event"] for l in "ghijk"}
user = N["r"]["event"]
H = 4096
# (from, to, kind, object, lo, hi, implied)
data = {
    ("a", "c", "RAW", X, 0, H, False), ("a", "d", "RAW", X, 0, H, False),
    ("b", "d", "RAW", X, H, 2 * H, False), ("b", "e", "WAW", X, H, 2 * H, True),
    ("d", "e", "WAR", X, H, 2 * H, False), ("d", "f", "RAW", Y, 0, H, False),
    ("g", "h", "RAW", W, 0, H, False), ("h", "k", "RAW", V, 0, H, True),
    ("a", "m", "WAW", X, 0, H, True), ("c", "m", "WAR", X, 0, H, False),
    ("d", "m", "WAR", X, 0, H, False), ("i", "o", "WAW", U, 0, H, False),
    ("g", "q", "WAW", W, 0, H, True), ("h", "q", "WAR", W, 0, H, False),
}
other = {
    ("f", "g", "host", None), ("g", "h", "event", ev["g"]), ("h", "j", "event", ev["h"]),
    ("i", "j", "event", ev["i"]), ("j", "k", "event", ev["j"]), ("k", "l", "event", ev["k"]),
    ("l", "m", "host", None), ("m", "n", "sync", None), ("n", "o", "host", None),
    ("o", "t", "order", None), ("t", "p", "sync", None), ("p", "q", "host", None),
    ("r", "q", "event", user), ("q", "s", "sync", None),
}
def label(e):
    return "%s->%s %s" % (name.get(e["from"], e["from"]), name.get(e["to"], e["to"]), e["kind"])
got_data, got_other = set(), set()
for e in d["edges"]:
    if e["from"] not in name or e["to"] not in name:
        sys.exit("FAIL: edge between unknown nodes: %s" % e)
    if not e.get("reason"):
        sys.exit("FAIL: edge without a reason: %s" % e)
    if e["kind"] in ("RAW", "WAR", "WAW"):
        got_data.add((name[e["from"]], name[e["to"]], e["kind"], e["object"], e["lo"], e["hi"], e["implied"]))
    else:
        if e["implied"]:
            sys.exit("FAIL: %s is marked implied" % label(e))
        got_other.add((name[e["from"]], name[e["to"]], e["kind"], e["object"]))
if got_other != other:
    sys.exit("FAIL: event/order/sync/host edges differ:\n  missing %s\n  unexpected %s"
             % (sorted(other - got_other, key=str), sorted(got_other - other, key=str)))
progs = [o for o in d["objects"] if o["kind"] == "program"]
if not progs or not progs[0]["analyzed"]:
    print("kernel analysis unavailable (%s): data edges not checked" % (progs[0]["why"] if progs else "?"))
    sys.exit(77)
if got_data != data:
    sys.exit("FAIL: data edges differ:\n  missing %s\n  unexpected %s"
             % (sorted(data - got_data, key=str), sorted(got_data - data, key=str)))
# independence by region: a/b, b/c, c/d, c/e, h/i have no edge at all
pairs = {(name[e["from"]], name[e["to"]]) for e in d["edges"]}
for x, y in ("ab", "bc", "cd", "ce", "hi"):
    if (x, y) in pairs or (y, x) in pairs:
        sys.exit("FAIL: %s and %s should be independent" % (x, y))
# lifetimes: x created before a, last used by m, released after s
ox = [o for o in d["objects"] if o["id"] == X][0]
if not (ox["create_seq"] < seq["a"] and ox["last_use_seq"] >= seq["m"] and ox["release_seq"] > seq["s"]):
    sys.exit("FAIL: lifetime of x: %s" % ox)
open(sys.argv[1] + ".seqs", "w").write("%d %d\n" % (seq["a"], seq["f"]))
EOF

# --range: only a..f and the edges among them
read -r A F <"$TMP/h.json.seqs"
"$CLRR" graph "$T" -o "$TMP/r.json" --range "$A:$F" || fail "clrr graph --range $A:$F"
python3 - "$TMP/r.json" "$A" "$F" <<'EOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1])); lo, hi = int(sys.argv[2]), int(sys.argv[3])
ids = [n["id"] for n in d["nodes"]]
assert len(ids) == 6 and all(lo <= i <= hi for i in ids), ids
assert d["edges"] and all(e["from"] in ids and e["to"] in ids for e in d["edges"]), d["edges"]
EOF
[ $? = 0 ] || fail "--range $A:$F"

# DOT, collapsed JSON, SVG
"$CLRR" graph "$T" -o "$TMP/h.dot" --collapse || fail "clrr graph -o .dot"
grep -q '^digraph clrr {' "$TMP/h.dot" && grep -q 'sum' "$TMP/h.dot" || fail "the DOT output is not a graph of the kernels"
"$CLRR" graph "$T" -o "$TMP/c.json" --collapse || fail "clrr graph --collapse"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["collapsed"] and d["nodes"]' "$TMP/c.json" ||
    fail "collapsed JSON"
if command -v dot >/dev/null; then
    "$CLRR" graph "$T" -o "$TMP/h.svg" || fail "clrr graph -o .svg"
    grep -q '<svg' "$TMP/h.svg" || fail "no SVG written"
fi

# errors: usage 2, failures 3, one line, nothing left behind
check() {
    want=$1; shift
    rc=0; "$CLRR" graph "$@" >"$TMP/o" 2>"$TMP/e" || rc=$?
    [ $rc = "$want" ] || fail "clrr graph $*: exit $rc, not $want: $(cat "$TMP/e")"
    [ "$(wc -l <"$TMP/e")" = 1 ] && grep -q '^clrr graph: ' "$TMP/e" || fail "clrr graph $*: stderr: $(cat "$TMP/e")"
}
check 2 "$T"
check 2 "$T" -o "$TMP/x.png"
check 2 "$T" -o "$TMP/x.json" --range 5:2
check 2 "$T" -o "$TMP/x.json" --bogus
check 3 "$TMP/nope.clrr" -o "$TMP/x.json"
check 3 "$T" -o "$TMP/nodir/x.json"
CLRR_DOT=/nonexistent/dot check 3 "$T" -o "$TMP/x.svg"
grep -q 'not found' "$TMP/e" || fail "a missing dot is not named: $(cat "$TMP/e")"
[ ! -e "$TMP/x.svg" ] && [ ! -e "$TMP/x.json" ] || fail "a failed graph left its output behind"
ls "$TMP" | grep -q 'tmp' && fail "temporary files left behind: $(ls "$TMP")"
echo ok
