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
mkdir -p "$ROOT" || { echo "fetch.sh: cannot create $ROOT" >&2; exit 1; }

# NAME OWNER/REPO COMMIT: the pinned suites
SUITES="
mixbench    ekondis/mixbench        236a0be007a5937e9ffb4a6c7eb1fafed6108e80
shoc        vetter/shoc             0aea03beba2f09fcb5935cc11737372fe4de9ec0
chai        chai-benchmarks/chai    1ad38e3607a59905c5edc4f6ae11f676a769f3d9
heteromark  NUCAR-DEV/Hetero-Mark   b8ea324d2394401776487b3520338d03f8c27676
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

want=" $* "
rc=0
while read -r name repo commit; do
    [ -n "$name" ] || continue
    [ "$want" = "  " ] || case "$want" in *" $name "*) ;; *) continue ;; esac
    get "$name" "$repo" "$commit" || { rc=1; continue; }
    if [ -f "$ROOT/$name/built.$commit" ]; then
        echo "ready: $name ($repo at ${commit:0:12}) in $ROOT/$name"
        continue
    fi
    if (cd "$ROOT/$name" && "build_$name") >"$ROOT/$name/build.log" 2>&1; then
        touch "$ROOT/$name/built.$commit"
        echo "built: $name ($repo at ${commit:0:12}) in $ROOT/$name"
    else
        echo "absent: $name (build failed: $ROOT/$name/build.log: $(grep -m1 -iE 'error' "$ROOT/$name/build.log" | cut -c1-160))"
        rc=1
    fi
done <<<"$SUITES"
exit $rc
