#!/usr/bin/env bash
# install.sh BUILD_DIR — `make install` with PREFIX and DESTDIR puts clrr,
# the layer and the LLVM libraries under DESTDIR/PREFIX; the installed clrr
# finds its libraries there (../lib beside itself), records a workload
# through the installed layer and replays it verified, and analyzes it
# with the installed analysis library; `make uninstall` removes exactly
# what was installed. (The plain flavour only: installing is the same for
# both, and a second make of the sanitizer build would only repeat it.)
. "$(dirname "$0")/lib.sh"
[ "${CLRR_SAN:-0}" = 1 ] && skip "install is tested in the plain build"
need "$CLRR"; need "$APPS/vecadd"
root=$(cd "$(dirname "$0")/../.." && pwd)
# the build folder as the Makefile names it (relative to the repository):
# another spelling of the same folder would make every target look missing
BR=$(realpath --relative-to="$root" "$B")
unset MAKEFLAGS MFLAGS MAKELEVEL   # not a part of the make that runs the tests
D=$TMP/dest; P=/opt/clrr-test
make --no-print-directory -C "$root" B="$BR" DESTDIR="$D" PREFIX="$P" install >"$TMP/inst.out" 2>&1 ||
    fail "make install: $(tail -5 "$TMP/inst.out")"
# nothing was built: make test built everything first, and a build here
# would race with the other tests using the same files
! grep -qE "^(cc|gcc|clang) " "$TMP/inst.out" || fail "make install rebuilt: $(grep -E "^(cc|gcc|clang) " "$TMP/inst.out" | head -2)"
for f in bin/clrr lib/libclrr.so lib/libclrr-ana.so lib/libclrr-rw.so; do
    [ -x "$D$P/$f" ] || fail "make install did not install $f"
done
for f in share/man/man1/clrr.1 share/man/man1/clrr-replay.1 share/bash-completion/completions/clrr; do
    [ -f "$D$P/$f" ] || fail "make install did not install $f"
done
I=$D$P/bin/clrr
"$I" record -o "$TMP/v.clrr" -- "$APPS/vecadd" --size 4096 --iters 2 --quiet >"$TMP/rec.out" 2>&1 ||
    fail "installed clrr record: $(cat "$TMP/rec.out")"
"$I" info "$TMP/v.clrr" | grep -q "clEnqueueNDRangeKernel\|kernels" || fail "installed clrr info: $("$I" info "$TMP/v.clrr" 2>&1 | head -3)"
"$I" replay "$TMP/v.clrr" >"$TMP/rep.out" 2>&1 || fail "installed clrr replay: $(cat "$TMP/rep.out")"
grep -q "^result *ok" "$TMP/rep.out" || fail "installed replay not verified: $(cat "$TMP/rep.out")"
# the analysis library the installed clrr loads is the installed one
LD_DEBUG=files "$I" analyze "$TMP/v.clrr" >"$TMP/ana.out" 2>"$TMP/ld.err" ||
    fail "installed clrr analyze: $(tail -3 "$TMP/ana.out")"
grep -q "kernel vecadd" "$TMP/ana.out" || fail "installed clrr analyze: $(head -3 "$TMP/ana.out")"
grep -qE "file=$D$P/(bin/\.\./)?lib/libclrr-ana\.so .*dynamically loaded" "$TMP/ld.err" ||
    fail "installed clrr analyze did not load $P/lib/libclrr-ana.so: $(grep libclrr-ana "$TMP/ld.err" | head -2)"
make -s --no-print-directory -C "$root" B="$BR" DESTDIR="$D" PREFIX="$P" uninstall >"$TMP/un.out" 2>&1 ||
    fail "make uninstall: $(cat "$TMP/un.out")"
left=$(find "$D" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "ok: installed under DESTDIR/PREFIX, recorded, replayed and analyzed from there, uninstalled"
