#!/usr/bin/env python3
"""explicit_index.py IN OUT — a fuzz input of the 'S' layout (fuzz.h) with
its 'I' sections written out: each gets the INDEX payload (FORMAT.md 6)
that fuzz_input.c would generate for the chunks before it, computed here
from the section sizes, so that mutations of the input reach the index
parser. Used by seeds.sh."""
import struct
import sys


def uint(v):
    if v < 128:
        return bytes([v])
    for tag, fmt, lim in ((0xCC, ">B", 1 << 8), (0xCD, ">H", 1 << 16), (0xCE, ">I", 1 << 32)):
        if v < lim:
            return bytes([tag]) + struct.pack(fmt, v)
    return b"\xcf" + struct.pack(">Q", v)


def arr(items):
    head = bytes([0x90 | len(items)]) if len(items) < 16 else b"\xdc" + struct.pack(">H", len(items))
    return head + b"".join(items)


def fixstr(t):
    return bytes([0xA0 | len(t)]) + t


def main():
    d = open(sys.argv[1], "rb").read()
    if d[:1] != b"S":
        sys.exit("explicit_index.py: not an 'S' input")
    out, recs, pieces, off, i = b"S", [], [], 32, 1
    while i + 5 <= len(d):
        tag, n = d[i:i + 1], struct.unpack("<I", d[i + 1:i + 5])[0]
        body = d[i + 5:i + 5 + n]
        i += 5 + n
        if tag == b"I":
            body = b"\x82" + fixstr(b"records") + arr(recs) + fixstr(b"pieces") + arr(pieces)
            off += 40 + len(body) + 32
        elif tag == b"R":
            recs.append(arr([uint(off), uint(len(body)), uint(len(body))]))
            off += 40 + len(body)
        elif tag == b"B":
            size, poff = struct.unpack("<QQ", body[16:32])
            raw = len(body) - 32
            pieces.append(arr([b"\xc4\x10" + body[:16], uint(size), uint(poff), uint(off), uint(raw), uint(raw)]))
            off += 72 + raw
        else:
            sys.exit("explicit_index.py: section %r not handled" % tag)
        out += tag + struct.pack("<I", len(body)) + body
    open(sys.argv[2], "wb").write(out)


if __name__ == "__main__":
    main()
