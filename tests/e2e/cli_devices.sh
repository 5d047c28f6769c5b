#!/usr/bin/env bash
# cli_devices.sh BUILD_DIR — `clrr devices` lists the devices that clinfo
# sees (here PoCL's CPU device), numbered from 0 in loader order, and
# --json is one valid JSON object with the same devices.
set -u
B=${1:?usage: cli_devices.sh BUILD_DIR}
B=$(cd "$B" 2>/dev/null && pwd) || { echo "FAIL: no build directory $1"; exit 1; }
CLRR=$B/bin/clrr
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$CLRR" ] || fail "$CLRR is not built"
command -v clinfo >/dev/null || { echo "skip: clinfo is not installed"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86:detect_leaks=0"

# The drivers leak (PoCL, LLVM): leaks are not clrr's, hence detect_leaks=0.
clinfo -l >"$T/clinfo" 2>/dev/null
sed -n 's/^ *[`+]-- Device #[0-9]*: //p' "$T/clinfo" >"$T/names"
[ -s "$T/names" ] || { echo "skip: clinfo -l lists no OpenCL device"; exit 77; }

"$CLRR" devices >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "clrr devices: exit $rc: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "clrr devices wrote to stderr: $(cat "$T/err")"
ndev=$(wc -l <"$T/names")
i=0
while IFS= read -r name; do
    grep -Fq "$name" "$T/out" || fail "clrr devices does not list '$name': $(cat "$T/out")"
    grep -Eq "^$i +(CPU|GPU|ACCELERATOR|CUSTOM|OTHER) " "$T/out" || fail "clrr devices: no entry numbered $i"
    i=$((i + 1))
done <"$T/names"
grep -Eq "^$ndev " "$T/out" && fail "clrr devices lists more devices than clinfo ($ndev)"
grep -qi "pocl\|portable computing" "$T/clinfo" && ! grep -qi "portable computing\|pocl" "$T/out" &&
    fail "clrr devices does not name the PoCL platform"
grep -q "compute units" "$T/out" || fail "clrr devices does not show compute units"

"$CLRR" devices --json >"$T/json" 2>"$T/err" || fail "clrr devices --json failed: $(cat "$T/err")"
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 - "$T/json" "$T/names" <<'EOF' || fail "clrr devices --json: $(head -c 400 "$T/json")"
import json, sys
doc = json.load(open(sys.argv[1]))
names = [l.rstrip("\n") for l in open(sys.argv[2])]
devs = doc["devices"]
assert [d["name"] for d in devs] == names, (devs, names)
for i, d in enumerate(devs):
    assert d["index"] == i
    for k in ("type", "vendor", "platform", "version", "compute_units", "global_mem", "max_wg_size"):
        assert k in d, k
    assert d["compute_units"] > 0 and d["global_mem"] > 0 and d["max_wg_size"] > 0
EOF
fi
echo "ok: $ndev device(s) listed"
