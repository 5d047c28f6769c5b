#!/usr/bin/env bash
# fetch.sh [NAME...] — fetches the public OpenCL benchmark suites that
# `make suites` runs, each at a pinned commit, into $CLRR_SUITES (default
# ~/.cache/clrr/suites: outside the repository; their code is never
# committed), and builds their OpenCL programs there. Without NAMEs: every
# suite. A suite that cannot be fetched or built is reported in one line
# and left out ("absent"); the others go on. `make suites` then skips what is
# absent and says so.
#
# Sources: https://github.com/OWNER/REPO, or $CLRR_SUITES_MIRROR/OWNER+REPO/repo
# (a local git directory, e.g. a mirror made beforehand) when that exists.
# Exit status: 0 when every suite asked for is built, 1 when one is absent.
set -u
ROOT=${CLRR_SUITES:-$HOME/.cache/clrr/suites}
MIRROR=${CLRR_SUITES_MIRROR:-}
JOBS=${CLRR_SUITES_JOBS:-$(nproc)}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$ROOT" || { echo "fetch.sh: cannot create $ROOT" >&2; exit 1; }

# NAME OWNER/REPO COMMIT: the pinned suites
SUITES="
mixbench    ekondis/mixbench        236a0be007a5937e9ffb4a6c7eb1fafed6108e80
shoc        vetter/shoc             0aea03beba2f09fcb5935cc11737372fe4de9ec0
chai        chai-benchmarks/chai    1ad38e3607a59905c5edc4f6ae11f676a769f3d9
heteromark  NUCAR-DEV/Hetero-Mark   b8ea324d2394401776487b3520338d03f8c27676
parboil     abduld/Parboil          a4c63da28f45699e9a274cbc49af3e067162aa2b
"

# get NAME OWNER/REPO COMMIT: $ROOT/NAME/src checked out at COMMIT
get() {
    local name=$1 repo=$2 commit=$3 d=$ROOT/$1/src url
    if [ -d "$d/.git" ] && [ "$(git -C "$d" rev-parse HEAD 2>/dev/null)" = "$commit" ]; then
        return 0
    fi
    rm -rf "$d"; mkdir -p "$ROOT/$name"
    url=https://github.com/$repo
    if [ -n "$MIRROR" ] && [ -d "$MIRROR/${repo/\//+}/repo" ]; then
        url=$MIRROR/${repo/\//+}/repo
    fi
    git clone -q --no-checkout "$url" "$d" 2>"$ROOT/$name/fetch.log" &&
        git -C "$d" -c advice.detachedHead=false checkout -q "$commit" 2>>"$ROOT/$name/fetch.log" ||
        { echo "absent: $name (could not fetch $repo at ${commit:0:12}: $(tail -1 "$ROOT/$name/fetch.log"))"; rm -rf "$d"; return 1; }
}

build_mixbench() {
    cmake -S src/mixbench-opencl -B build -DCMAKE_BUILD_TYPE=Release &&
        cmake --build build -j "$JOBS"
}
build_heteromark() {
    # the OpenCL 1.2 versions only (cl12); CUDA/HIP/HC are found absent
    cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-include stdexcept -include cstdint -w" -DCOMPILE_CUDA=OFF -DCOMPILE_HIP=OFF \
        -DCOMPILE_HCC=OFF -DCOMPILE_OPENCL12=ON -DCOMPILE_OPENCL20=OFF &&
        cmake --build build -j "$JOBS"
}
build_shoc() {
    mkdir -p build && cd build &&
        ../src/configure -q --with-opencl --without-cuda --without-mpi CXXFLAGS="-O2 -std=c++11 -fpermissive -w" &&
        make -s -j "$JOBS"
}
build_chai() {
    local b ok=0
    for b in src/OpenCL-D/*/; do
        b=$(basename "$b")
        rm -rf "build/$b"; mkdir -p build; cp -r "src/OpenCL-D/$b" "build/$b"
        make -s -C "build/$b" CHAI_OCL_LIB=/usr/lib/x86_64-linux-gnu CHAI_OCL_INC=/usr/include \
            CXX_FLAGS="-O2 -std=c++11 -w" || ok=1
    done
    return $ok
}

# Parboil: its own build driver is python2, so each benchmark's opencl_base
# version is built here with plain cc/c++ from the objects its Makefile
# names (SRCDIR_OBJS), with the common harness (parboil_opencl.c, args.c,
# stub.cc) and stand-ins for its libpfm performance monitor (perf_init etc.:
# no-ops; Parboil's own do nothing unless MXPA_PROFILE is set). Into
# build/BENCH/: the program and the benchmark's src/ (its kernels are read
# from src/opencl_base relative to the working directory; mri-q's are built
# with -I src/opencl_nvidia). A benchmark that does not build gets one
# "skipped:" line in build.log; the others go on. Parboil's datasets are a
# separate download, not in the repository: tests/suites/parboil_inputs.py
# writes our own small inputs into inputs/BENCH/ (after every fetch.sh).
build_parboil() {
    local b s o srcs inc n=0 cf="-O2 -w -DCL_TARGET_OPENCL_VERSION=120 -Isrc/common/include -Ibuild/common/include"
    mkdir -p build/common/include/perfmon || return 1
    printf '%s\n' '/* clrr fetch.sh: stand-in for libpfm4 header (the types perf_util.h names) */' \
        '#include <stdio.h>' '#include <linux/perf_event.h>' >build/common/include/perfmon/pfmlib_perf_event.h
    printf '%s\n' '/* clrr fetch.sh: no-op stand-in for Parboil perfmon.c (needs libpfm) */' \
        'void perf_init(void) {}' 'void perf_start(const char *k) { (void)k; }' \
        'void perf_end(const char *k) { (void)k; }' 'void perf_fini(void) {}' \
        'void pin_trace_enable(char *n) { (void)n; }' 'void pin_trace_disable(char *n) { (void)n; }' >build/common/perfstub.c
    # its pb_sig_uchar is defined with other types than parboil.h declares (an
    # error for gcc 12): compiled from a copy whose definition matches
    sed 's/^pb_sig_uchar(char\* c, unsigned char\* p, int sz) {/pb_sig_uchar(char* c, int* pi, unsigned int sz) { unsigned char* p = (unsigned char*)pi;/' \
        src/common/src/parboil_opencl.c >build/common/parboil_opencl.c &&
        cc $cf -Isrc/common/src -c build/common/parboil_opencl.c -o build/common/parboil_opencl.o &&
        cc $cf -c src/common/src/args.c -o build/common/args.o &&
        c++ $cf -c -x c++ src/common/src/stub.cc -o build/common/stub.o &&
        cc $cf -c build/common/perfstub.c -o build/common/perfstub.o || return 1
    for s in src/benchmarks/*/src/opencl_base; do
        b=${s#src/benchmarks/}; b=${b%%/*}
        rm -rf "build/$b"; mkdir -p "build/$b/obj"
        srcs=$(cat "$s/Makefile" "src/benchmarks/$b"/common_src/*/commontools.mk 2>/dev/null |
            sed -n 's/#.*//; s/^SRCDIR_OBJS *+\{0,1\}= *//p')
        inc="-I$s"; for o in "src/benchmarks/$b"/common_src/*/; do [ -d "$o" ] && inc="$inc -I$o"; done
        if (for o in $srcs; do
                o=$s/${o%.o}
                if [ -f "$o.c" ]; then cc $cf $inc -c "$o.c" -o "build/$b/obj/${o##*/}.o" || exit 1
                elif [ -f "$o.cc" ]; then c++ $cf $inc -c "$o.cc" -o "build/$b/obj/${o##*/}.o" || exit 1
                elif [ -f "$o.cpp" ]; then c++ $cf $inc -c "$o.cpp" -o "build/$b/obj/${o##*/}.o" || exit 1
                else echo "$b: no source for $o"; exit 1; fi
            done
            c++ "build/$b"/obj/*.o build/common/*.o -o "build/$b/$b" -lOpenCL -lm -lpthread &&
                cp -r "src/benchmarks/$b/src" "build/$b/src" && rm -rf "build/$b/obj"
        ); then
            n=$((n + 1))
        else
            echo "skipped: parboil $b (does not build: see above)"; rm -rf "build/$b"
        fi
    done
    echo "parboil: $n benchmarks built"
    [ "$n" -gt 0 ]
}

want=" $* "
rc=0
while read -r name repo commit; do
    [ -n "$name" ] || continue
    [ "$want" = "  " ] || case "$want" in *" $name "*) ;; *) continue ;; esac
    get "$name" "$repo" "$commit" || { rc=1; continue; }
    if [ -f "$ROOT/$name/built.$commit" ]; then
        echo "ready: $name ($repo at ${commit:0:12}) in $ROOT/$name"
    elif (cd "$ROOT/$name" && "build_$name") >"$ROOT/$name/build.log" 2>&1; then
        touch "$ROOT/$name/built.$commit"
        echo "built: $name ($repo at ${commit:0:12}) in $ROOT/$name"
    else
        echo "absent: $name (build failed: $ROOT/$name/build.log: $(grep -m1 -iE 'error' "$ROOT/$name/build.log" | cut -c1-160))"
        rc=1
        continue
    fi
    # Parboil's inputs: ours, deterministic, written anew each time (a second)
    if [ "$name" = parboil ] && ! python3 "$HERE/parboil_inputs.py" "$ROOT/parboil/inputs" >"$ROOT/parboil/inputs.log" 2>&1; then
        echo "absent: parboil (inputs: $ROOT/parboil/inputs.log: $(tail -1 "$ROOT/parboil/inputs.log"))"
        rm -f "$ROOT/parboil"/built.*; rc=1
    fi
done <<<"$SUITES"
exit $rc
