#!/usr/bin/env python3
"""make.py BUILD_DIR — writes the corrupt and truncated traces of
tests/corrupt/ from good.clrr (a small vecadd trace recorded on the stub
driver: blob, record and index chunks, zstd and uncompressed payloads).
expected.txt says what clrr must answer for each; tests/e2e/corrupt_traces.sh
checks it. The files are committed; this script makes them again, byte for
byte, from good.clrr.

Byte-level damage is done on good.clrr itself; record-level damage on its
records, decompressed: BUILD_DIR/tests/fuzz-pack turns the trace into a fuzz
input of the 'S' layout (tests/fuzz/fuzz.h), this script edits the records
(a little msgpack codec below), and fuzz-pack -u writes the trace again
(codec none, every check right); fuzz-pack -r recomputes the checks after
a byte-level edit where only the edited field should be wrong.

  make.py BUILD_DIR             write every *.clrr but good.clrr and pocl-ep.clrr
  make.py BUILD_DIR --record    record good.clrr again first (the stub,
                                vecadd --size 64 --iters 1)
  make.py BUILD_DIR --record-pocl  record pocl-ep.clrr again first (PoCL's
                                CPU device, ep --size 64 --pairs 4 --iters 1:
                                a loop kernel, non-blocking reads)

The pocl-*.clrr traces are made from pocl-ep.clrr: values that a lax driver
(PoCL) does not refuse and that crashed or hung it (replayer/rpl_guard.c
refuses them before the call); expected.txt replays them on PoCL
("replay-pocl").
"""
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD = os.path.join(HERE, "good.clrr")
POCL = os.path.join(HERE, "pocl-ep.clrr")
BASES = ("good.clrr", "pocl-ep.clrr")


# ------------------------------------------------------------- msgpack

class Ext:
    def __init__(self, type_, data):
        self.type, self.data = type_, data


class Raw:
    """Bytes emitted as they are (hostile encodings)."""
    def __init__(self, data):
        self.data = data


def unpack(d, i=0):
    """One msgpack value at d[i:]; returns (value, next index)."""
    b = d[i]
    i += 1
    if b <= 0x7F:
        return b, i
    if b >= 0xE0:
        return b - 0x100, i
    if 0x80 <= b <= 0x8F or b in (0xDE, 0xDF):
        n = b & 0x0F if b <= 0x8F else struct.unpack(">H" if b == 0xDE else ">I", d[i:i + (2 if b == 0xDE else 4)])[0]
        i += 0 if b <= 0x8F else (2 if b == 0xDE else 4)
        m = []
        for _ in range(n):
            k, i = unpack(d, i)
            v, i = unpack(d, i)
            m.append((k, v))
        return dict(m) if all(isinstance(k, (str, int)) for k, _ in m) else m, i
    if 0x90 <= b <= 0x9F or b in (0xDC, 0xDD):
        n = b & 0x0F if b <= 0x9F else struct.unpack(">H" if b == 0xDC else ">I", d[i:i + (2 if b == 0xDC else 4)])[0]
        i += 0 if b <= 0x9F else (2 if b == 0xDC else 4)
        a = []
        for _ in range(n):
            v, i = unpack(d, i)
            a.append(v)
        return a, i
    if 0xA0 <= b <= 0xBF or b in (0xD9, 0xDA, 0xDB):
        w = {0xD9: 1, 0xDA: 2, 0xDB: 4}.get(b, 0)
        n = b & 0x1F if not w else int.from_bytes(d[i:i + w], "big")
        i += w
        return d[i:i + n].decode("utf-8", "surrogateescape"), i + n
    if b in (0xC4, 0xC5, 0xC6):
        w = {0xC4: 1, 0xC5: 2, 0xC6: 4}[b]
        n = int.from_bytes(d[i:i + w], "big")
        return bytes(d[i + w:i + w + n]), i + w + n
    if b == 0xC0:
        return None, i
    if b in (0xC2, 0xC3):
        return b == 0xC3, i
    if b in (0xCA, 0xCB):
        w = 4 if b == 0xCA else 8
        return struct.unpack(">f" if w == 4 else ">d", d[i:i + w])[0], i + w
    if 0xCC <= b <= 0xCF:
        w = 1 << (b - 0xCC)
        return int.from_bytes(d[i:i + w], "big"), i + w
    if 0xD0 <= b <= 0xD3:
        w = 1 << (b - 0xD0)
        return int.from_bytes(d[i:i + w], "big", signed=True), i + w
    if b in (0xD4, 0xD5, 0xD6, 0xD7, 0xD8):
        n = 1 << (b - 0xD4)
        return Ext(d[i] - 256 if d[i] > 127 else d[i], bytes(d[i + 1:i + 1 + n])), i + 1 + n
    if b in (0xC7, 0xC8, 0xC9):
        w = 1 << (b - 0xC7)
        n = int.from_bytes(d[i:i + w], "big")
        t = d[i + w]
        return Ext(t - 256 if t > 127 else t, bytes(d[i + w + 1:i + w + 1 + n])), i + w + 1 + n
    raise ValueError("msgpack byte 0x%02x at %d" % (b, i - 1))


def pack(v):
    """The smallest msgpack encoding of v (as the reference writer)."""
    if isinstance(v, Raw):
        return v.data
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return bytes([v + 256])
        if v >= 0:
            for tag, w in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
                if v < 1 << (8 * w):
                    return bytes([tag]) + v.to_bytes(w, "big")
        for tag, w in ((0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
            if v >= -(1 << (8 * w - 1)):
                return bytes([tag]) + v.to_bytes(w, "big", signed=True)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode("utf-8", "surrogateescape")
        n = len(b)
        head = bytes([0xA0 | n]) if n < 32 else b"\xd9" + bytes([n]) if n < 256 else b"\xda" + n.to_bytes(2, "big")
        return head + b
    if isinstance(v, (bytes, bytearray)):
        n = len(v)
        head = b"\xc4" + bytes([n]) if n < 256 else b"\xc5" + n.to_bytes(2, "big")
        return head + bytes(v)
    if isinstance(v, list):
        n = len(v)
        head = bytes([0x90 | n]) if n < 16 else b"\xdc" + n.to_bytes(2, "big")
        return head + b"".join(pack(x) for x in v)
    if isinstance(v, dict):
        n = len(v)
        head = bytes([0x80 | n]) if n < 16 else b"\xde" + n.to_bytes(2, "big")
        return head + b"".join(pack(k) + pack(x) for k, x in v.items())
    if isinstance(v, Ext):
        n = len(v.data)
        if n in (1, 2, 4, 8, 16):
            return bytes([{1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}[n], v.type & 0xFF]) + v.data
        return b"\xc7" + bytes([n, v.type & 0xFF]) + v.data
    raise TypeError(v)


def records(payload):
    out, i = [], 0
    while i < len(payload):
        v, i = unpack(payload, i)
        out.append(v)
    return out


# ------------------------------------------------------------- the trace

def run(*args):
    subprocess.run(args, check=True)


class Sections:
    """A trace as fuzz-input sections: [(tag, bytes)]."""
    def __init__(self, build, trace=GOOD, out_dir=HERE):
        self.pack = os.path.join(build, "tests", "fuzz-pack")
        self.out_dir = out_dir
        tmp = os.path.join(out_dir, ".good.S")
        run(self.pack, trace, tmp)
        d = open(tmp, "rb").read()
        os.unlink(tmp)
        self.secs, i = [], 1
        while i + 5 <= len(d):
            n = struct.unpack("<I", d[i + 1:i + 5])[0]
            self.secs.append((d[i:i + 1], d[i + 5:i + 5 + n]))
            i += 5 + n

    def write(self, name, secs):
        tmp = os.path.join(self.out_dir, ".tmp.S")
        with open(tmp, "wb") as f:
            f.write(b"S")
            for tag, body in secs:
                f.write(tag + struct.pack("<I", len(body)) + body)
        run(self.pack, "-u", tmp, os.path.join(self.out_dir, name))
        os.unlink(tmp)

    def with_records(self, name, extra, where=None):
        """The trace with the records @p extra (values) in a RECORD chunk of
        their own, after the record chunk number @p where (default: the
        last one), before the index."""
        body = b"".join(pack(r) for r in extra)
        rec_idx = [k for k, (t, _) in enumerate(self.secs) if t == b"R"]
        at = rec_idx[-1 if where is None else where] + 1
        self.write(name, self.secs[:at] + [(b"R", body)] + self.secs[at:])

    def edit_records(self, name, fn):
        """The trace with every record passed through fn(record) -> record."""
        secs = []
        for t, body in self.secs:
            if t == b"R":
                body = b"".join(pack(fn(r)) for r in records(body))
            secs.append((t, body))
        self.write(name, secs)

    def edit_stream(self, name, fn):
        """The trace with each RECORD chunk's list of records passed
        through fn(records) -> records (records added or removed)."""
        secs = []
        for t, body in self.secs:
            if t == b"R":
                body = b"".join(pack(r) for r in fn(records(body)))
            secs.append((t, body))
        self.write(name, secs)

    def all_records(self):
        return [r for t, b in self.secs if t == b"R" for r in records(b)]


def chunks(d):
    """(offset, type, codec, ext_len, stored) of every chunk of d."""
    out, off = [], struct.unpack("<H", d[14:16])[0]
    while off + 40 <= len(d) and d[off:off + 4] == b"\x89CHK":
        ext = struct.unpack("<H", d[off + 6:off + 8])[0]
        stored = struct.unpack("<Q", d[off + 8:off + 16])[0]
        out.append((off, d[off + 4], d[off + 5], ext, stored))
        off += 40 + ext + stored
    return out


def put(d, off, fmt, v):
    d = bytearray(d)
    struct.pack_into(fmt, d, off, v)
    return bytes(d)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    if "--record" in sys.argv[2:]:
        env = dict(os.environ, OCL_ICD_VENDORS=os.path.abspath(os.path.join(build, "stub-vendors")))
        subprocess.run([os.path.join(build, "bin", "clrr"), "record", "-o", GOOD, "--",
                        os.path.join(build, "apps", "vecadd"), "--size", "64", "--iters", "1", "--quiet"],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if "--record-pocl" in sys.argv[2:]:
        env = {k: v for k, v in os.environ.items() if k not in ("OCL_ICD_VENDORS", "OPENCL_LAYERS", "LD_PRELOAD")}
        subprocess.run([os.path.join(build, "bin", "clrr"), "record", "-o", POCL, "--",
                        os.path.join(build, "apps", "ep"), "--size", "64", "--pairs", "4", "--iters", "1",
                        "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    for f in os.listdir(HERE):
        if f.endswith(".clrr") and f not in BASES:
            os.unlink(os.path.join(HERE, f))
    good = open(GOOD, "rb").read()
    ch = chunks(good)
    rec_chunks = [c for c in ch if c[1] == 1]
    blob_chunks = [c for c in ch if c[1] == 2]
    index = [c for c in ch if c[1] == 3][0]
    zrec = [c for c in rec_chunks if c[2] == 1][0]        # a zstd RECORD chunk
    rawblob = [c for c in blob_chunks if c[2] == 0][0]    # an uncompressed BLOB chunk

    def out(name, data, reseal=False):
        p = os.path.join(HERE, name)
        open(p, "wb").write(data)
        if reseal:
            run(os.path.join(build, "tests", "fuzz-pack"), "-r", p)

    # --- the file header (FORMAT.md 2)
    out("empty.clrr", b"")
    out("text.clrr", b"this is a text file, not a trace\n")
    out("bad-magic.clrr", good[:1] + b"X" + good[2:])
    out("header-cut.clrr", good[:20])
    out("newer-major.clrr", put(good, 10, "<H", 3), reseal=True)
    # feature bits (FORMAT.md 2.1): made a 2.1 file, an unknown required bit
    # refuses it, an unknown optional bit does not; good.clrr is 1.0, whose
    # flags were reserved and stay ignored
    v21 = put(put(good, 10, "<H", 2), 12, "<H", 1)
    out("unknown-required-feature.clrr", put(v21, 16, "<Q", 1 << 3), reseal=True)
    out("unknown-optional-feature.clrr", put(v21, 16, "<Q", 1 << 40), reseal=True)
    out("flags-before-2.1.clrr", put(good, 16, "<Q", 1 << 3), reseal=True)
    out("bad-header-check.clrr", put(good, 24, "<I", 1))
    out("header-len-past-end.clrr", put(good, 14, "<H", 0xFFFF), reseal=True)

    # --- chunks (FORMAT.md 3, 7.1)
    last = rec_chunks[-1][0]
    out("torn-last-chunk.clrr", good[:last + 100])
    out("zero-filled-tail.clrr", good[:index[0]] + bytes(4096))
    off = rawblob[0]
    out("bad-chunk-magic.clrr", good[:off] + b"\x89CHX" + good[off + 4:])
    out("bad-chunk-header-check.clrr", put(good, off + 32, "<I", 7))
    p = zrec[0] + 40 + zrec[3] + 10
    out("bad-payload-check.clrr", good[:p] + bytes([good[p] ^ 0x55]) + good[p + 1:])
    # a zstd frame whose header (content size) is right and whose blocks are not
    start, n = zrec[0] + 40 + zrec[3], zrec[4]
    garbage = bytes((i * 37 + 11) & 0xFF for i in range(n - 12))
    out("zstd-garbage.clrr", good[:start + 12] + garbage + good[start + n:], reseal=True)
    out("zstd-wrong-size.clrr", good[:start] + bytes(n) + good[start + n:], reseal=True)
    out("unknown-codec.clrr", put(good, zrec[0] + 5, "<B", 7), reseal=True)
    out("ext-over-limit.clrr", put(good, off + 6, "<H", 2000))
    out("raw-over-limit.clrr", put(good, zrec[0] + 16, "<Q", 1 << 36), reseal=True)
    out("stored-not-raw.clrr", put(good, off + 16, "<Q", rawblob[4] + 1), reseal=True)
    out("blob-piece-outside.clrr", put(good, off + 64, "<Q", 1 << 20), reseal=True)
    # an unknown chunk type is skipped (a later minor version); the index
    # would name the old offsets: the file ends without one, cleanly
    unk = bytearray(good[off:off + 40 + 32 + rawblob[4]])
    unk[4] = 9
    out("unknown-chunk-type.clrr", good[:off] + bytes(unk) + good[off:index[0]], reseal=True)

    # --- the index and trailer (FORMAT.md 6)
    ip = index[0] + 40
    idx, _ = unpack(good, ip)
    out("trailer-bad-check.clrr", put(good, len(good) - 4, "<I", 0))
    bad = dict(idx, pieces=[list(e[:3]) + [1 << 40] + list(e[4:]) for e in idx["pieces"]])
    body = pack(bad)
    hdr = bytearray(good[index[0]:index[0] + 40])
    struct.pack_into("<QQ", hdr, 8, len(body), len(body))
    trailer = bytearray(good[-32:])
    struct.pack_into("<Q", trailer, 16, index[0] + 40 + len(body))
    out("index-outside-file.clrr", good[:index[0]] + bytes(hdr) + body + bytes(trailer), reseal=True)
    # every piece entry names the first RECORD chunk: a valid index, wrong
    wrong = dict(idx, pieces=[list(e[:3]) + [rec_chunks[0][0]] + list(e[4:]) for e in idx["pieces"]])
    body = pack(wrong)
    struct.pack_into("<QQ", hdr, 8, len(body), len(body))
    struct.pack_into("<Q", trailer, 16, index[0] + 40 + len(body))
    out("index-wrong-chunk.clrr", good[:index[0]] + bytes(hdr) + body + bytes(trailer), reseal=True)

    # --- records (FORMAT.md 4, 5): the trace with records added or edited
    S = Sections(build)
    recs = S.all_records()
    # a signature of one parameter (clFinish, clFlush, a release ...)
    fin = next(r[1] for r in recs if isinstance(r, list) and r and r[0] == 1 and len(r[4]) == 1)
    seq = 1 + max(r[1] for r in recs if isinstance(r, list) and r and r[0] in (2, 3))
    S.with_records("record-not-array.clrr", [7])
    S.with_records("record-wrong-field-type.clrr", [[2, "seq", 1, fin, 0, [1], None]])
    S.with_records("record-too-short.clrr", [[3, seq]])
    S.with_records("begin-unknown-sig.clrr", [[2, seq, 1, 4242, 0, [], None]])
    S.with_records("begin-arg-count.clrr", [[2, seq, 1, fin, 0, [1, 2, 3], None]])
    S.with_records("begin-twice.clrr", [[2, seq, 1, fin, 0, [1], None], [2, seq, 1, fin, 0, [1], None]])
    S.with_records("end-without-begin.clrr", [[3, seq, 0, 0, [None], None]])
    S.with_records("sig-redefined.clrr", [[1, fin, "clSomethingElse", "cl_int", [["queue", "cl_command_queue", 1, 1]]]])
    S.with_records("env-not-map.clrr", [[0, [1, 2]]])
    # msgpack that lies: an array of 2^32-1 values, 40 nested arrays, 0xc1,
    # a str longer than the chunk, an ext of a type 1.0 does not define
    S.with_records("array-count-2e32.clrr", [[6, 0, 0, Raw(b"\xdd\xff\xff\xff\xff")]])
    S.with_records("nesting-too-deep.clrr", [[6, 0, 0, Raw(b"\x91" * 40 + b"\xc0")]])
    S.with_records("msgpack-c1.clrr", [[6, 0, 0, Raw(b"\xc1")]])
    S.with_records("str-past-chunk.clrr", [[6, 0, 0, Raw(b"\xdb\x00\x01\x00\x00abc")]])
    S.with_records("ext-type-2.clrr", [[6, 0, 0, Ext(2, bytes(24))]])
    # forward compatibility: unknown record types and extra fields are ignored
    S.with_records("unknown-record-type.clrr", [[99, "from a later minor version", {"x": 1}]])

    # blob references (ext 1): to no blob, and claiming 1 TB
    def blobrefs(fn):
        def walk(v):
            if isinstance(v, Ext) and v.type == 1 and len(v.data) == 24:
                return fn(v)
            if isinstance(v, list):
                return [walk(x) for x in v]
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            return v
        return walk
    S.edit_records("blob-missing.clrr", blobrefs(lambda v: Ext(1, bytes(16) + v.data[16:])))
    S.edit_records("blob-1tb.clrr", blobrefs(lambda v: Ext(1, v.data[:16] + struct.pack("<Q", 1 << 40))))

    # counts that promise the driver more elements than recorded: work_dim 3
    # with one global size; 1000 events in a wait list that is NULL (the
    # driver refuses it: a call that fails here)
    sigs = {r[1]: r[2] for r in recs if isinstance(r, list) and r and r[0] == 1}

    def arg(fname, i, value):
        def f(r):
            if isinstance(r, list) and len(r) > 5 and r[0] == 2 and sigs.get(r[3]) == fname:
                r = list(r)
                r[5] = list(r[5])
                r[5][i] = value
            return r
        return f
    S.edit_records("count-work-dim-past-array.clrr", arg("clEnqueueNDRangeKernel", 2, 3))
    S.edit_records("count-wait-list-without-array.clrr", arg("clEnqueueNDRangeKernel", 6, 1000))

    pocl(build)


def pocl(build):
    """Hostile values on a trace recorded on PoCL (pocl-ep.clrr): the
    calls are ep's (clSetKernelArg #17..#21: seed, pairs, n, sums, counts;
    the launch #22; non-blocking reads #23 of sums (512 bytes) and #24 of
    counts, whose DATA come before clFinish #25)."""
    P = Sections(build, trace=POCL)
    recs = P.all_records()
    sigs = {r[1]: r[2] for r in recs if isinstance(r, list) and r and r[0] == 1}
    begin = {r[1]: r for r in recs if isinstance(r, list) and len(r) > 5 and r[0] == 2}
    launch = next(q for q, r in begin.items() if sigs.get(r[3]) == "clEnqueueNDRangeKernel")
    reads = sorted(q for q, r in begin.items() if sigs.get(r[3]) == "clEnqueueReadBuffer")
    setargs = {r[5][1]: q for q, r in begin.items() if sigs.get(r[3]) == "clSetKernelArg"}
    release = next(r[3] for r in begin.values() if sigs.get(r[3]) == "clReleaseMemObject")

    def args(seq, **kv):
        """BEGIN @p seq with arguments i=value (a0=..., a4=...) changed."""
        def f(r):
            if isinstance(r, list) and len(r) > 5 and r[0] == 2 and r[1] == seq:
                r = list(r)
                r[5] = list(r[5])
                for k, v in kv.items():
                    r[5][int(k[1:])] = v
            return r
        return f

    def data(fn):
        def f(r):
            if isinstance(r, list) and len(r) == 4 and r[0] == 5:
                r = [5, r[1], r[2], fn(r)]
            return r
        return f

    # counts and arrays: a wait list of 5 events that is NULL
    P.edit_records("pocl-wait-list-null.clrr", args(reads[0], a6=5))
    # clSetKernelArg: arg_size against the recorded bytes, the kernel's
    # argument (pairs is a uint), a handle's size; local memory of 2^40
    P.edit_records("pocl-setarg-size-bytes.clrr", args(setargs[1], a2=4096))
    P.edit_records("pocl-setarg-size-type.clrr", args(setargs[1], a2=8, a3=b"\x04" + bytes(7)))
    P.edit_records("pocl-setarg-handle-size.clrr", args(setargs[3], a2=4))
    P.edit_records("pocl-setarg-local-2e40.clrr", args(setargs[1], a2=1 << 40, a3=None))
    # launch shapes: work_dim 0, one dimension of 2^62, 2^42 work-items in
    # three, an offset whose ids wrap, a local size of 0
    P.edit_records("pocl-work-dim-0.clrr", args(launch, a2=0))
    P.edit_records("pocl-global-2e62.clrr", args(launch, a4=[1 << 62], a5=None))
    P.edit_records("pocl-global-2e42-3d.clrr", args(launch, a2=3, a3=None, a4=[1 << 14] * 3, a5=None))
    P.edit_records("pocl-offset-wrap.clrr", args(launch, a3=[(1 << 64) - 1]))
    P.edit_records("pocl-local-0.clrr", args(launch, a5=[0]))
    # ranges: a read past the buffer's 512 bytes, an offset that wraps
    P.edit_records("pocl-read-past-end.clrr", args(reads[0], a4=4096))
    P.edit_records("pocl-read-offset-wrap.clrr", args(reads[0], a3=(1 << 64) - 16))
    # the late DATA of a non-blocking read that is not bytes: an integer, nil
    P.edit_records("pocl-late-data-int.clrr", data(lambda r: 7 if r[1] == reads[0] else None))
    # a launch whose memory argument was released (a clReleaseMemObject of
    # the sums buffer right before it)
    seq = 1 + max(begin)
    sums = begin[setargs[3]][5][3]

    sigrec = next(r for r in recs if isinstance(r, list) and r and r[0] == 1 and r[1] == release)

    def released(rs):
        out = []
        for r in rs:
            if isinstance(r, list) and r and r[0] == 1 and r[1] == release:
                continue   # defined earlier now
            if isinstance(r, list) and len(r) > 5 and r[0] == 2 and r[1] == launch:
                out += [sigrec, [2, seq, 1, release, r[4] - 2, [sums], None], [3, seq, r[4] - 1, 0, [None], None]]
            out.append(r)
        return out
    P.edit_stream("pocl-released-arg.clrr", released)
    # a loop kernel made to run for ever: pairs 2^31 (the --timeout test)
    P.edit_records("pocl-pairs-2e31.clrr", args(setargs[1], a3=struct.pack("<I", 1 << 31)))


if __name__ == "__main__":
    main()
