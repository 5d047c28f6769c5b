#!/usr/bin/env bash
# cli_show.sh BUILD_DIR — `clrr show` on a trace of tests/progs/show_prog
# recorded here on the real driver: the source printed is the one the
# program passed; the build log of the program that fails to build is the
# driver's; a buffer's contents after the kernel that wrote it, computed by
# replay, equal the read-back the application recorded (and its sub-buffer
# the second half), as do a read map's recorded bytes; --as float4 parses
# and holds the kernel's values; .npy loads in numpy with the right dtype,
# shape and values; PNGs of the 2D
# image and of the 3D image's slices decode (zlib alone) to the image's
# bytes; the failed calls are listed, and counted by info and stats; bad
# input is one line and exit 2 (3 for an unreadable trace).
. "$(dirname "$0")/lib.sh"
need "$CLRR"; P=$B/tests/progs/show_prog; need "$P"
CLRR=$(realpath "$CLRR"); P=$(realpath "$P")
# numpy is Debian's (python3-numpy): the system python, not a pyenv one
NPY=/usr/bin/python3
$NPY -c 'import numpy' 2>/dev/null || NPY=python3
$NPY -c 'import numpy' 2>/dev/null || skip "no numpy (python3-numpy)"
cd "$TMP" || fail "cd $TMP"

"$CLRR" record -o t.clrr -- "$P" --quiet || fail "recording show_prog"
"$CLRR" dump t.clrr >dump.txt || fail "clrr dump"
"$CLRR" show t.clrr --json >list.json || fail "clrr show --json"
# ids and calls: from the listing and the dump, never hard-coded
eval "$(python3 - <<'PY'
import json, re
d = json.load(open("list.json"))
good = [p for p in d["programs"] if p["last_build"] == "CL_SUCCESS"][0]
bad = [p for p in d["programs"] if p["last_build"] == "CL_BUILD_PROGRAM_FAILURE"][0]
k = {x["name"]: x for x in d["kernels"]}
mem = d["memory"]
buf = [m for m in mem if m["kind"] == "buffer" and m["size"] == 1024][0]
sub = [m for m in mem if m["kind"] == "sub-buffer"][0]
ibuf = [m for m in mem if m["kind"] == "buffer" and m["size"] == 256][0]
img = [m for m in mem if m["kind"] == "image" and m["image"]["type"] == "2D" and m["image"]["channel_type"] == "CL_UNORM_INT8"][0]
vol = [m for m in mem if m["kind"] == "image" and m["image"]["type"] == "3D"][0]
simg = [m for m in mem if m["kind"] == "image" and m["image"]["channel_type"] == "CL_SIGNED_INT32"][0]
dump = open("dump.txt").read().splitlines()
def seq(pat):
    for l in dump:
        if re.search(pat, l):
            return int(l[1:].split()[0])
    raise SystemExit("no call matches " + pat)
fill = k["fill4"]["id"]
print("GOOD=%d BAD=%d BUF=%d SUB=%d IBUF=%d IMG=%d VOL=%d SIMG=%d FAILED=%d CALLS=%d" % (
    good["id"], bad["id"], buf["id"], sub["id"], ibuf["id"], img["id"], vol["id"], simg["id"],
    d["failed_calls"], d["calls"]))
print("KFILL=%d" % seq(r"clEnqueueNDRangeKernel\(command_queue=#\d+, kernel=#%d," % fill))
print("RFILL=%d" % seq(r"clEnqueueReadBuffer\(command_queue=#\d+, buffer=#%d," % buf["id"]))
print("RIMG=%d" % seq(r"clEnqueueReadImage\(command_queue=#\d+, image=#%d," % img["id"]))
print("MIBUF=%d" % seq(r"clEnqueueMapBuffer\(command_queue=#\d+, buffer=#%d," % ibuf["id"]))
PY
)" || fail "reading the listing"
[ "$FAILED" = 3 ] || fail "the listing counts $FAILED failed calls, not 3"

# expect WANT ARGS...: exit WANT, exactly one line on stderr starting with "clrr show"
expect() {
    local want=$1; shift
    local rc=0
    "$CLRR" show "$@" >out.txt 2>err.txt || rc=$?
    [ "$rc" = "$want" ] || fail "clrr show $*: exit $rc, not $want: $(cat err.txt)"
    [ "$(wc -l <err.txt)" = 1 ] && grep -q '^clrr show' err.txt || fail "clrr show $*: not one error line: $(cat err.txt)"
}

# --- programs: the source as passed, the driver's build log, kernels' arguments
"$P" --print-source >want.cl
"$CLRR" show t.clrr "$GOOD" --source >src.cl || fail "show --source"
cmp -s src.cl want.cl || fail "the source shown is not the one the program passed"
"$CLRR" show t.clrr "$GOOD" -o src2.cl >/dev/null || fail "show PROGRAM -o"
cmp -s src2.cl want.cl || fail "show PROGRAM -o FILE is not the source"
"$CLRR" show t.clrr "$GOOD" >prog.txt || fail "show PROGRAM"
grep -q 'options "-DSCALE=3 -cl-kernel-arg-info"' prog.txt || fail "build options not shown: $(cat prog.txt)"
"$CLRR" show t.clrr "$BAD" --log >log.txt || fail "show --log"
grep -q 'build log of device' log.txt && grep -qi 'error' log.txt || fail "no driver build log: $(cat log.txt)"
"$CLRR" show t.clrr "$BAD" --log --replay >log2.txt 2>/dev/null || fail "show --log --replay"
grep -q 'computed by replay here' log2.txt && grep -qi 'error' log2.txt || fail "no build log by replay: $(cat log2.txt)"
"$CLRR" show t.clrr "$BAD" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["builds"][0]["result"] == "CL_BUILD_PROGRAM_FAILURE", d["builds"]
assert "error" in d["build_logs"][0]["log"].lower(), d["build_logs"]
assert d["source"].startswith("__kernel void broken"), d["source"]' || fail "show BAD --json"
"$CLRR" show t.clrr fill4 >k.txt || fail "show fill4"
grep -Eq '^ +0 +out +float4\* +__global .*\[recorded' k.txt && grep -Eq '^ +1 +bias +float ' k.txt ||
    fail "fill4's recorded argument info: $(cat k.txt)"
"$CLRR" show t.clrr twice >k2.txt || fail "show twice"
grep -Eq '^ +1 +tmp +int\* +__local .*\[analysis' k2.txt && grep -q 'set: __local, 64 B' k2.txt ||
    fail "twice's argument info from the analysis: $(cat k2.txt)"

# --- a buffer after the kernel that wrote it, by replay = the recorded read-back
"$CLRR" show t.clrr "$BUF" --at "$KFILL" -o replayed.bin >how1.txt || fail "show BUF --at KERNEL"
grep -q 'computed by replay up to call #'"$KFILL" how1.txt || fail "not computed by replay: $(cat how1.txt)"
"$CLRR" show t.clrr "$BUF" --at "$RFILL" -o recorded.bin >how2.txt || fail "show BUF --at READ"
grep -q "from the trace (call #$RFILL)" how2.txt || fail "not from the read-back: $(cat how2.txt)"
[ "$(stat -c %s recorded.bin)" = 1024 ] && cmp -s replayed.bin recorded.bin ||
    fail "the replayed contents differ from the recorded read-back"
"$CLRR" show t.clrr "$BUF" --at "$RFILL" --replay -o replayed2.bin >/dev/null || fail "show --replay"
cmp -s replayed2.bin recorded.bin || fail "--replay differs from the read-back"
"$CLRR" show t.clrr "$SUB" -o sub.bin >how3.txt || fail "show SUB"
tail -c 512 recorded.bin | cmp -s - sub.bin || fail "the sub-buffer is not the buffer's second half"
"$CLRR" show t.clrr "$IBUF" --at "$MIBUF" -o mapped.bin >how5.txt || fail "show IBUF --at MAP"
grep -q "from the trace (call #$MIBUF)" how5.txt || fail "not from the read map: $(cat how5.txt)"
"$CLRR" show t.clrr "$IBUF" --at "$MIBUF" --replay -o mapped-replay.bin >/dev/null || fail "show IBUF --replay"
cmp -s mapped.bin mapped-replay.bin || fail "the read map's recorded bytes differ from the replay's"
"$CLRR" show t.clrr "$BUF" --at "$RFILL" -o - >stdout.bin 2>/dev/null || fail "show -o -"
cmp -s stdout.bin recorded.bin || fail "-o - differs from -o FILE"

# --- typed text, .npy
"$CLRR" show t.clrr "$BUF" --at "$RFILL" --as float4 >f4.txt || fail "--as float4"
python3 - f4.txt recorded.bin <<'PY' || fail "--as float4 does not match"
import struct, sys
lines = open(sys.argv[1]).read().splitlines()[1:]
raw = open(sys.argv[2], "rb").read()
want = struct.unpack("<%df" % (len(raw) // 4), raw)
assert len(lines) == 64, len(lines)
for i, l in enumerate(lines):
    idx, *vals = l.split()
    assert idx == "[%d]" % i, l
    got = [float(v) for v in vals]
    assert got == list(want[4 * i:4 * i + 4]), (l, want[4 * i:4 * i + 4])
    assert got == [i, 3.0 * i, -i, 0.75], l      # the kernel's formula
PY
"$CLRR" show t.clrr "$BUF" --at "$RFILL" --as float4 --range 2:3 >r.txt || fail "--range"
[ "$(tail -n +2 r.txt)" = "$(printf '[2] 2 6 -2 0.75\n[3] 3 9 -3 0.75')" ] || fail "--range 2:3: $(cat r.txt)"
"$CLRR" show t.clrr "$IBUF" --as int --count 3 >i.txt || fail "--as int"
[ "$(tail -n +2 i.txt)" = "$(printf '[0] -200\n[1] -198\n[2] -192')" ] || fail "the doubled ints: $(cat i.txt)"
"$CLRR" show t.clrr "$BUF" --at "$RFILL" --as float4 -o b.npy >/dev/null || fail "-o .npy"
"$CLRR" show t.clrr "$IMG" -o img.npy >/dev/null || fail "-o image .npy"
"$CLRR" show t.clrr "$IMG" -o img.raw >/dev/null || fail "-o image raw"
$NPY - <<'PY' || fail ".npy does not load as expected"
import numpy as np
a = np.load("b.npy")
assert a.dtype == np.float32 and a.shape == (64, 4), (a.dtype, a.shape)
assert (a == np.fromfile("recorded.bin", dtype="<f4").reshape(64, 4)).all()
m = np.load("img.npy")
assert m.dtype == np.uint8 and m.shape == (8, 16, 4), (m.dtype, m.shape)
assert (m.ravel() == np.fromfile("img.raw", dtype=np.uint8)).all()
PY

# --- PNG: the 2D image, the 3D image's slices; decoded here with zlib alone
"$CLRR" show t.clrr "$IMG" --at "$RIMG" -o img.png >how4.txt || fail "-o .png"
grep -q "from the trace (call #$RIMG)" how4.txt || fail "the image is not the read-back: $(cat how4.txt)"
"$CLRR" show t.clrr "$IMG" --at "$RIMG" --replay -o img-replay.png >/dev/null || fail "--replay -o .png"
"$CLRR" show t.clrr "$VOL" -o vol/ >/dev/null || fail "-o DIR/"
"$CLRR" show t.clrr "$VOL" -o vol.raw >/dev/null || fail "3D raw"
python3 - <<'PY' || fail "the PNGs are not the images' pixels"
import struct, zlib
def png(path):
    b = open(path, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n", path
    i, idat = 8, b""
    while i < len(b):
        n, t = struct.unpack(">I4s", b[i:i + 8]); d = b[i + 8:i + 8 + n]; i += 12 + n
        if t == b"IHDR": w, h, depth, ct = struct.unpack(">IIBB", d[:10])
        if t == b"IDAT": idat += d
    ch = {0: 1, 2: 3, 4: 2, 6: 4}[ct]; bpp = ch * depth // 8; stride = w * bpp
    raw, out, prev = zlib.decompress(idat), bytearray(), bytearray(stride)
    for y in range(h):
        f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = row[x - bpp] if x >= bpp else 0; c = prev[x - bpp] if x >= bpp else 0; up = prev[x]
            if f == 1: row[x] = (row[x] + a) & 255
            elif f == 2: row[x] = (row[x] + up) & 255
            elif f == 3: row[x] = (row[x] + (a + up) // 2) & 255
            elif f == 4:
                p = a + up - c; pa, pb, pc = abs(p - a), abs(p - up), abs(p - c)
                row[x] = (row[x] + (a if pa <= pb and pa <= pc else up if pb <= pc else c)) & 255
        out += row; prev = row
    return w, h, depth, ct, bytes(out)
w, h, depth, ct, px = png("img.png")
assert (w, h, depth, ct) == (16, 8, 8, 6), (w, h, depth, ct)
assert px == open("img.raw", "rb").read(), "2D pixels"
assert png("img-replay.png")[4] == px, "replayed image"
# the kernel's values (x/15, y/7, (x+y)/22, 1) as UNORM_INT8, within rounding
for y in range(8):
    for x in range(16):
        r, g, b_, a = px[(y * 16 + x) * 4:(y * 16 + x) * 4 + 4]
        assert abs(r - x / 15 * 255) <= 1 and abs(g - y / 7 * 255) <= 1 and abs(b_ - (x + y) / 22 * 255) <= 1 and a == 255
vol = open("vol.raw", "rb").read()
assert vol == bytes((i * 4) & 255 for i in range(60)), "the 3D image's host data"
for z in range(3):
    w, h, depth, ct, px = png("vol/slice-%03d.png" % z)
    assert (w, h, depth, ct) == (5, 4, 8, 0) and px == vol[z * 20:(z + 1) * 20], z
PY

# --- failed calls: listed, and counted by info and stats
"$CLRR" show t.clrr errors >errs.txt || fail "show errors"
[ "$(head -1 errs.txt)" = "3 of $CALLS calls failed" ] || fail "show errors: $(head -1 errs.txt)"
grep -Eq '^#[0-9]+ +clCreateBuffer +CL_INVALID_BUFFER_SIZE$' errs.txt &&
    grep -Eq 'clCreateKernel +CL_INVALID_KERNEL_NAME$' errs.txt &&
    grep -Eq 'clBuildProgram +CL_BUILD_PROGRAM_FAILURE$' errs.txt || fail "show errors: $(cat errs.txt)"
"$CLRR" show t.clrr errors --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["failed_calls"] == 3 and sorted(e["error"] for e in d["errors"]) == \
    ["CL_BUILD_PROGRAM_FAILURE", "CL_INVALID_BUFFER_SIZE", "CL_INVALID_KERNEL_NAME"], d' || fail "errors --json"
"$CLRR" info t.clrr | grep -q "3 of $CALLS calls failed" || fail "info does not count the failed calls"
"$CLRR" stats t.clrr | grep -q "3 of $CALLS calls failed" || fail "stats does not count the failed calls"
for c in info stats; do
    "$CLRR" $c t.clrr --json | python3 -c 'import json, sys; assert json.load(sys.stdin)["failed_calls"] == 3' ||
        fail "$c --json: failed_calls"
done

# --- bad input: one line, exit 2 (3: the trace cannot be read)
expect 2 t.clrr 99999;            grep -q 'no program, kernel or memory object #99999' err.txt || fail "$(cat err.txt)"
expect 2 t.clrr no_such_kernel
expect 2 t.clrr "$BUF" --at 99999; grep -q 'the trace ends at call' err.txt || fail "$(cat err.txt)"
expect 2 t.clrr "$BUF" --at 1;    grep -q 'is created at call' err.txt || fail "$(cat err.txt)"
expect 2 t.clrr "$BUF" --as float5
expect 2 t.clrr "$BUF" --as floaty
expect 2 t.clrr "$BUF" -o b.png;  grep -q 'only images have a PNG form' err.txt || fail "$(cat err.txt)"
expect 2 t.clrr "$SIMG" -o s.png; grep -q 'no PNG form' err.txt || fail "$(cat err.txt)"
expect 2 t.clrr "$VOL" -o v.png
expect 2 t.clrr "$GOOD" --at 3
expect 2 t.clrr "$GOOD" --binary 0
expect 2 t.clrr errors --at 3
expect 2 t.clrr "$BUF" --format gif -o x
[ ! -e b.png ] && [ ! -e s.png ] && [ ! -e v.png ] || fail "a refused output was written"
expect 3 missing.clrr
echo "not a trace" >junk.clrr
expect 3 junk.clrr
exit 0
