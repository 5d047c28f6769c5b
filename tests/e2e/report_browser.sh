#!/usr/bin/env bash
# report_browser.sh BUILD_DIR — `clrr report` in a real browser (headless
# Chromium; skipped, exit 77, only where it is not installed: `make deps`
# installs it). On sobel recorded here on the real driver from a directory
# whose name holds "</script><!--" and UTF-8 (the page must still load: the
# JSON is escaped; the path shows as it is), optimized into a plan and
# replayed with it (--json): the page loads with no script error (its
# script says so on <html>, and reports window.onerror into the DOM), the
# timeline draws one slice per device command of the trace (counted from
# `clrr dump`) and its arrows, zooms on the wheel, pans on a drag and shows
# a slice's arguments on a click (#selftest drives its handlers), the graph
# its nodes, the kernel table one row per kernel, the plan table one row per
# transformation (from `clrr plan show`), and a screenshot of it is not
# blank (the PNG decoded here has many colours). The page holds no address
# of anything to load. A program that makes calls fail on purpose gives a
# page that lists exactly those calls. Bad input: one line, documented exit.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$APPS/sobel"
command -v chromium >/dev/null 2>&1 || skip "chromium is not installed (make deps installs it): no browser test of clrr report"
CLRR=$(realpath "$CLRR"); APPS=$(realpath "$APPS")
cd "$TMP" || fail "cd $TMP"

# browse PAGE SHOT: the DOM after the page's script ran (PAGE.dom), and a
# screenshot (one browser run for both)
browse() {
    timeout 60 chromium --headless=new --disable-gpu --no-sandbox --hide-scrollbars \
        --user-data-dir="$TMP/chrome" --virtual-time-budget=3000 --window-size=900,700 \
        --screenshot="$2" --dump-dom "file://$1" >"$1.dom" 2>"$1.log" ||
        fail "chromium $1: $(tail -3 "$1.log")"
    [ -s "$1.dom" ] && [ -s "$2" ] || fail "chromium wrote no DOM or no screenshot: $(tail -3 "$1.log")"
}
# attr PAGE NAME: attribute NAME of the <html> element in PAGE's DOM
attr() { grep -o -m1 '<html [^>]*>' "$1.dom" | grep -o " $2=\"[^\"]*\"" | sed 's/^[^"]*"//; s/"$//'; }

dir="$TMP/a</script><!--b-été"
mkdir -p "$dir" && cp "$APPS/sobel" "$dir/sobel" || fail "making $dir"
"$CLRR" record --force -o s.clrr -- "$dir/sobel" --size 128 --iters 2 >/dev/null || fail "recording sobel"
"$CLRR" optimize s.clrr -o s.plan >/dev/null 2>&1 || fail "clrr optimize"
"$CLRR" replay s.clrr --plan s.plan --timing --json >replay.json 2>err.txt || fail "replay --plan --json: $(cat err.txt)"
"$CLRR" report s.clrr --plan s.plan --replay-json replay.json -o "$TMP/s.html" || fail "clrr report"
ncmd=$("$CLRR" dump s.clrr | grep -c '^#[0-9]* \[t[0-9]*\] clEnqueue')
nxf=$("$CLRR" plan show s.plan | grep -c '^#[0-9]')
nk=$("$CLRR" stats --json s.clrr | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["kernels"]))')
[ "$ncmd" -gt 0 ] && [ "$nk" = 3 ] || fail "sobel: $ncmd commands, $nk kernels"
# self-contained: nothing to fetch (the SVG namespace is a name, and url(#id)
# a reference inside the page)
python3 - "$TMP/s.html" <<'PY' || fail "the page refers to something to load"
import re, sys
s = open(sys.argv[1], encoding="utf-8").read().replace("http://www.w3.org/2000/svg", "")
bad = re.findall(r"""(?:src|href|action)\s*=\s*["']?(?!#)[^"'\s>]+|url\((?!#)[^)]*\)|@import|<link\b|<iframe\b|<img\b|\b(?:https?|ftp|wss?):/|fetch\(|XMLHttpRequest|new\s+WebSocket""", s)
if bad:
    print("FAIL:", sorted(set(bad))[:5]); sys.exit(1)
PY
grep -q '</script><!--b' "$TMP/s.html" && fail "the program's path is in the page unescaped"
grep -q 'b-été/sobel' "$TMP/s.html" || fail "the program's UTF-8 path did not survive"
browse "$TMP/s.html" "$TMP/s.png"
[ "$(attr "$TMP/s.html" data-clrr-report)" = ok ] ||
    fail "the page did not load cleanly: $(attr "$TMP/s.html" data-clrr-report) $(attr "$TMP/s.html" data-clrr-errors) $(grep -i 'console\|error' "$TMP/s.html.log" | grep -v dbus | head -3)"
grep -q 'id="js-errors"></div>' "$TMP/s.html.dom" || fail "script errors: $(grep -o 'id="js-errors"[^<]*' "$TMP/s.html.dom")"
grep -q 'a&lt;/script&gt;&lt;!--b-été/sobel --size 128' "$TMP/s.html.dom" || fail "the program's path is not shown as text"
v=$(attr "$TMP/s.html" data-device-slices-drawn)
[ "$v" = "$ncmd" ] || fail "the timeline drew $v device slices, the trace has $ncmd device commands"
[ "$(attr "$TMP/s.html" data-device-slices)" = "$ncmd" ] || fail "device slices in the data: $(attr "$TMP/s.html" data-device-slices)"
[ "$(attr "$TMP/s.html" data-flows-drawn)" -gt 0 ] || fail "no dependency arrow drawn"
[ "$(attr "$TMP/s.html" data-graph-nodes)" -gt 0 ] || fail "no graph node drawn"
[ "$(attr "$TMP/s.html" data-kernel-rows)" = "$nk" ] || fail "kernel rows: $(attr "$TMP/s.html" data-kernel-rows), not $nk"
[ "$(attr "$TMP/s.html" data-plan-rows)" = "$nxf" ] || fail "plan rows: $(attr "$TMP/s.html" data-plan-rows), not $nxf"
[ "$(attr "$TMP/s.html" data-failed-calls)" = 0 ] || fail "sobel has failed calls?"
grep -q 'Measured: clrr replay --plan --json' "$TMP/s.html.dom" || fail "no measured effect"
python3 - "$TMP/s.png" <<'PY' || fail "the screenshot"
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
i, idat, w = 8, b"", 0
while i < len(b):
    n, t = struct.unpack(">I4s", b[i:i + 8])
    d = b[i + 8:i + 8 + n]
    if t == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", d[:10])
        assert depth == 8 and ctype in (2, 6), "colour type %d depth %d" % (ctype, depth)
        bpp = 3 if ctype == 2 else 4
    elif t == b"IDAT":
        idat += d
    i += 12 + n
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, p = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[p], bytearray(raw[p + 1:p + 1 + stride])
    p += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        c = prev[x - bpp] if x >= bpp else 0
        u = prev[x]
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + u) & 255
        elif f == 3: line[x] = (line[x] + (a + u) // 2) & 255
        elif f == 4:
            pa, pb, pc = abs(u - c), abs(a - c), abs(a + u - 2 * c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else u if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 2):
            colours.add(bytes(line[x:x + 3]))
    prev = line
print("screenshot %dx%d, %d colours" % (w, h, len(colours)))
if len(colours) < 64:
    print("FAIL: the screenshot is (nearly) blank: %d colours" % len(colours)); sys.exit(1)
PY

# the timeline's own handlers: wheel zoom, drag pan, click for arguments
timeout 60 chromium --headless=new --disable-gpu --no-sandbox --user-data-dir="$TMP/chrome" \
    --virtual-time-budget=3000 --window-size=900,700 --dump-dom "file://$TMP/s.html#selftest" \
    >"$TMP/t.html.dom" 2>"$TMP/t.log" || fail "chromium #selftest: $(tail -3 "$TMP/t.log")"
[ "$(attr "$TMP/t.html" data-selftest)" = ok ] || fail "timeline interaction: $(attr "$TMP/t.html" data-selftest)"

# --no-analysis: the same page, every kernel "not analyzed"
"$CLRR" report s.clrr --no-analysis -o "$TMP/n.html" || fail "report --no-analysis"
python3 - "$TMP/n.html" "$TMP/s.html" <<'PY' || fail "report --no-analysis"
import json, re, sys
def data(p):
    s = open(p, encoding="utf-8").read()
    return json.loads(re.search(r'<script type="application/json" id="clrr-data">(.*?)</script>', s, re.S).group(1))
n, a = data(sys.argv[1]), data(sys.argv[2])
assert [k["analysis"]["analyzed"] for k in n["kernels"]] == [False] * 3, n["kernels"]
assert [k["analysis"]["analyzed"] for k in a["kernels"]] == [True] * 3, a["kernels"]
assert any(x.get("writes_split") is not None for k in a["kernels"] for x in k["analysis"]["args"]), a["kernels"]
assert n["timeline"]["device_slices"] == a["timeline"]["device_slices"]
PY

# --- failing calls: a program that makes 4 calls fail on purpose
cat >fails.c <<'EOF'
#include <CL/cl.h>
#include <stdio.h>
int main(void)
{
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    char buf[8];
    if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL))
        return 1;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    for (int i = 0; i < 3; i++)   /* size 0: CL_INVALID_BUFFER_SIZE */
        if (clCreateBuffer(c, CL_MEM_READ_WRITE, 0, NULL, &e) || e != CL_INVALID_BUFFER_SIZE)
            return 2;
    if (clGetDeviceInfo(d, 0x7fff, sizeof buf, buf, NULL) != CL_INVALID_VALUE)
        return 3;
    clReleaseContext(c);
    puts("fails: ok");
    return 0;
}
EOF
cc -DCL_TARGET_OPENCL_VERSION=300 -o fails fails.c -lOpenCL || fail "compiling fails.c"
FOREIGN=()
if [ -n "$(asan_rt)" ]; then FOREIGN=(env "LD_PRELOAD=$(asan_rt)"); fi
"$CLRR" record --force -o f.clrr -- "${FOREIGN[@]}" ./fails >/dev/null || fail "recording fails"
"$CLRR" report f.clrr -o - >"$TMP/f.html" 2>err.txt || fail "report -o -: $(cat err.txt)"
[ ! -e ./- ] || fail "report -o - wrote a file named '-'"
browse "$TMP/f.html" "$TMP/f.png"
[ "$(attr "$TMP/f.html" data-clrr-report)" = ok ] || fail "the failing-calls page: $(attr "$TMP/f.html" data-clrr-errors)"
[ "$(attr "$TMP/f.html" data-failed-calls)" = 4 ] && [ "$(attr "$TMP/f.html" data-error-rows)" = 4 ] ||
    fail "failed calls: $(attr "$TMP/f.html" data-failed-calls), rows $(attr "$TMP/f.html" data-error-rows), not 4"
sed -n 's|.*\(<section id="errors">.*</section>\).*|\1|p' "$TMP/f.html.dom" | sed 's|</section>.*||' >errors.dom
[ "$(grep -o '<td[^>]*>CL_INVALID_BUFFER_SIZE (-61)</td>' errors.dom | wc -l)" = 3 ] &&
    [ "$(grep -o '<td[^>]*>CL_INVALID_VALUE (-30)</td>' errors.dom | wc -l)" = 1 ] ||
    fail "the failing calls are not named: $(cat errors.dom)"
grep -q '4 of [0-9]* calls failed' errors.dom || fail "no 'N of M calls failed' line"

# --- bad input: one line on stderr, the documented status, OUT untouched
expect() {
    local want=$1; shift
    local rc=0
    "$CLRR" report "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" = "$want" ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q '^clrr report: ' err.txt ||
        fail "clrr report $*: exit $rc (want $want): $(cat err.txt)"
}
echo keep >old.html
expect 2 s.clrr
expect 2 s.clrr -o s.clrr
expect 2 s.clrr -o old.html --bogus
expect 3 missing.clrr -o old.html
printf 'not a trace' >bad.clrr
expect 3 bad.clrr -o old.html
echo '{"not": "a plan"}' >bad.plan
expect 3 s.clrr --plan bad.plan -o old.html
echo 'not json' >bad.json
expect 3 s.clrr --replay-json bad.json -o old.html
echo '{"calls": 1}' >bad2.json
expect 3 s.clrr --replay-json bad2.json -o old.html
[ "$(cat old.html)" = keep ] || fail "a failed report changed OUT"
ls old.html.tmp* >/dev/null 2>&1 && fail "a temporary was left behind"
echo "ok"
