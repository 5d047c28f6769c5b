# Layering (docs/ARCHITECTURE.md, "Layers"; tests/e2e/layering.py): no
# module includes a header of a module its row does not list, or another
# module's *_int.h; no object needs a symbol of such a module; the layer
# (libclrr.so) and clrr need no LLVM or Clang library or symbol, and the
# layer is linked from the project's objects alone (no archive, nothing of
# the optimizer, analyzer or rewriter). The checks are shown to catch a
# violation first.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
L="python3 $ROOT/tests/e2e/layering.py"
$L table "$ROOT" || fail "the layer table of docs/ARCHITECTURE.md"

# the checks find what they are there to find: live/ without the replayer in
# its row (live_layer.c includes replayer/rpl.h and calls rpl_splitter_*) ...
sed '/^| `live` /s/`replayer`, //' "$ROOT/docs/ARCHITECTURE.md" >"$TMP/arch.md"
! grep -q '^| `live` .*replayer' "$TMP/arch.md" || fail "could not edit the table for the self-check"
$L --table "$TMP/arch.md" includes "$ROOT" >"$TMP/inc.txt" && fail "includes: live/ using replayer/ not found"
grep -q 'live/live_layer.c:[0-9]*: live includes replayer/rpl.h' "$TMP/inc.txt" || fail "includes: $(head -3 "$TMP/inc.txt")"
$L --table "$TMP/arch.md" links "$ROOT" "$B" >"$TMP/lnk.txt" && fail "links: live/ calling replayer/ not found"
grep -q 'live_layer.o: live needs rpl_splitter_' "$TMP/lnk.txt" || fail "links: $(head -3 "$TMP/lnk.txt")"
# ... and another module's internal header, in a tree of empty modules
mkdir -p "$TMP/tree/docs"
cp "$ROOT/docs/ARCHITECTURE.md" "$TMP/tree/docs/"
for m in $(sed -n '/layers:begin/,/layers:end/s/^| `\([a-z-]*\)` .*/\1/p' "$ROOT/docs/ARCHITECTURE.md"); do
    mkdir -p "$TMP/tree/$m"
    [ -e "$ROOT/$m" ] && find "$ROOT/$m" -maxdepth 1 -name '*.h' -exec cp {} "$TMP/tree/$m/" \;
done
printf '#include "plan/plan.h"\n#include "plan/plan_int.h"\n' >"$TMP/tree/live/x.c"
printf '#include "trace-format/tf.h"\n#include "live/live.h"\n' >"$TMP/tree/plan/y.c"
$L includes "$TMP/tree" >"$TMP/tree.txt" && fail "includes: violations in a test tree not found"
grep -q 'live/x.c:2: live includes plan/plan_int.h: an internal header of plan' "$TMP/tree.txt" &&
    grep -q 'plan/y.c:2: plan includes live/live.h: plan may not use live' "$TMP/tree.txt" &&
    [ "$(wc -l <"$TMP/tree.txt")" = 2 ] || fail "includes in a test tree: $(cat "$TMP/tree.txt")"

# the tree as it is
$L includes "$ROOT" || fail "a module includes past its layer"
$L links "$ROOT" "$B" || fail "a module links past its layer"

# no LLVM, no Clang in the runtime pieces: libraries they need, symbols
# (the sanitizers' runtime of a SAN=1 build, libclang_rt.*, is the
# compiler's, not LLVM's or Clang's libraries)
LLVM='LLVM|[Cc]lang|_ZN4llvm|_ZN5clang'
needs_llvm() {   # FILE: prints what it needs of LLVM or Clang; 0 when something
    readelf -d "$1" | grep NEEDED >"$TMP/needed.txt" || fail "readelf -d $1"
    grep -q 'libc\.so' "$TMP/needed.txt" || fail "$1: readelf lists no libraries"
    nm -D --undefined-only "$1" >"$TMP/undef.txt" || fail "nm -D $1"
    [ -s "$TMP/undef.txt" ] || fail "$1: nm lists no undefined symbols"
    { grep -E 'lib(LLVM|clang)' "$TMP/needed.txt"; grep -E "$LLVM" "$TMP/undef.txt"; } | grep -v 'libclang_rt\.'
}
# the check finds LLVM where it is: the kernel analysis, loaded on demand
need "$B/lib/libclrr-ana.so"
needs_llvm "$B/lib/libclrr-ana.so" >/dev/null || fail "the check finds no LLVM in libclrr-ana.so"
for f in "$LAYER" "$CLRR"; do
    ! needs_llvm "$f" || fail "$f needs LLVM or Clang (above)"
done
# the layer's link map: project objects only, none of the offline modules,
# no archive of the project
MAP=$B/lib/libclrr.map
need "$MAP"
grep -q 'obj/recorder/rec_core.o' "$MAP" || fail "the link map does not list the recorder's objects"
! grep -E '^LOAD .*/lib/lib(tf|cdb|rpl|plan|clive|opt|ana|rw|recctl)\.a' "$MAP" || fail "the layer searches an archive of the project"
! grep -E '^LOAD .*/obj/(optimizer|analyzer|rewriter|tools)/' "$MAP" || fail "the layer links an offline module's object"
! grep -E '^LOAD .*(LLVM|clang)' "$MAP" | grep -v '/libclang_rt\.' || fail "the layer links LLVM or Clang"
exit 0
