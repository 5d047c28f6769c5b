#!/usr/bin/env bash
# seeds.sh BUILD_DIR OUT_DIR — seeds for the fuzz corpora, written to
# OUT_DIR/replay and OUT_DIR/trace-format (named seed-*; the committed
# corpora in tests/fuzz-corpus/ hold them and what libFuzzer added).
# replay: small real traces, recorded here on the stub driver (tests/progs
# and tests/apps at small sizes) and taken from traces/, packed into the
# 'S' input layout (fuzz-pack: blobs cut to 1 KiB) behind an options byte
# (fuzz_replay.c). A few traces get every option: exact calls, no
# verification, loops, timing, a tolerance, read-backs by step, a range,
# kernel mode and trim. Named seed-TRACE-OPTIONS. Recordings on the stub
# fail their own checks (it runs no kernel): what matters is the calls.
# trace-format: four traces in the 'S' layout (blobs cut to 256 bytes;
# bigblob-pocl-2.0 also with its blobs as 'Y' sections, byte-shuffled),
# with a generated index and with the index written out in the input
# (explicit_index.py: mutations then reach the index parser), and one
# whole trace file as it is.
set -euo pipefail
B=${1:?usage: seeds.sh BUILD_DIR OUT_DIR}
OUT=${2:?usage: seeds.sh BUILD_DIR OUT_DIR}
TOUT=$OUT/trace-format
OUT=$OUT/replay
CLRR=$B/bin/clrr
PACK=$B/tests/fuzz-pack
export OCL_ICD_VENDORS; OCL_ICD_VENDORS=$(realpath "$B/stub-vendors")
unset OPENCL_LAYERS LD_PRELOAD CLRR_STUB_LOG POCL_DEVICES
TMP=$(mktemp -d /tmp/clrr-seeds.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT" "$TOUT"

# record NAME CMD...: a trace of CMD on the stub, or nothing
record() {
    local name=$1; shift
    "$CLRR" record -o "$TMP/$name.clrr" -- "$@" >"$TMP/$name.out" 2>&1 || true
    [ -s "$TMP/$name.clrr" ] || echo "seeds.sh: no trace of $*: $(tail -1 "$TMP/$name.out")" >&2
}
# pack NAME TAG BYTES [CUT]: seed-NAME-TAG from trace NAME behind BYTES,
# blobs cut to CUT bytes (1024; more where a program's source is longer)
pack() {
    [ ! -s "$TMP/$1.clrr" ] || "$PACK" -p "$3" -s "${4:-1024}" "$TMP/$1.clrr" "$OUT/seed-$1-$2"
}
# first_seq NAME FUNCTION: the number of the first call of FUNCTION
first_seq() {
    "$CLRR" dump --json "$TMP/$1.clrr" | /usr/bin/python3 -c '
import json, sys
print(next((c["seq"] for c in map(json.loads, sys.stdin) if c.get("fn") == sys.argv[1]), 1))' "$2"
}

P=$B/tests/progs
A=$B/apps
record api_tour "$P/api_tour" --no-check --quiet
record image_map "$P/image_map" --quiet
record helium "$P/helium" --quiet
for v in 0 1 2; do record diverge$v "$P/diverge" --variant $v --quiet; done
[ -x "$P/threads" ] && record threads "$P/threads" --threads 2 --iters 2 --size 64
for a in vecadd blackscholes histogram nbody spmv aes overlap ep jacobi sobel; do
    record "$a" "$A/$a" --size 64 --iters 2 --quiet
done
for t in vecadd-early-data image_map.h200 bigblob-pocl-2.0; do cp "traces/$t.clrr" "$TMP/$t.clrr"; done

for t in "$TMP"/*.clrr; do
    t=$(basename "$t" .clrr)
    case $t in aes|sobel) pack "$t" plain 0 8192;; *) pack "$t" plain 0;; esac
done
for t in vecadd api_tour image_map; do
    pack $t exact 1
    pack $t noverify 2
    pack $t loop 4
    pack $t timing 8
    pack $t tolerance 16
    pack $t step 128
    pack $t loop-exact-step 133
    k=$(first_seq $t clEnqueueNDRangeKernel)
    [ "$k" -gt 1 ] || continue
    pack $t range 32,$k,4
    pack $t kernel 64,$k
    pack $t kernel-loop 68,$k
    pack $t trim 96,$k,2
done
for t in vecadd image_map vecadd-early-data bigblob-pocl-2.0; do
    "$PACK" -s 256 "$TMP/$t.clrr" "$TOUT/seed-$t"
    /usr/bin/python3 "$(dirname "$0")/explicit_index.py" "$TOUT/seed-$t" "$TOUT/seed-$t-index"
done
cp "$TMP/image_map.h200.clrr" "$TOUT/seed-image_map.h200-file"
# the same bigblob seed with every blob section a 'Y' (byte-shuffled
# here): its shuffled piece lies past the 256 bytes kept
/usr/bin/python3 - "$TOUT/seed-bigblob-pocl-2.0" "$TOUT/seed-bigblob-pocl-2.0-Y" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
i = 1
while i + 5 <= len(d) and d[i] in b"RZBYIX":
    if d[i] == ord("B"):
        d[i] = ord("Y")
    i += 5 + struct.unpack_from("<I", d, i + 1)[0]
open(sys.argv[2], "wb").write(d)
PY
for d in "$OUT" "$TOUT"; do echo "seeds.sh: $d: $(ls "$d" | wc -l) files, $(du -sh "$d" | cut -f1)"; done
