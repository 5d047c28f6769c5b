# Recording that cannot be written: a file size limit (ulimit -f: the writer
# gets EFBIG, the application is not killed by SIGXFSZ), a full file system
# (a small tmpfs in a user namespace; /dev/full), an unwritable output (a
# missing directory, a directory, a read-only directory). In every case the
# application runs to the end with the same output and exit status, and the
# recorder says so in exactly one line on stderr; a partial trace opens with
# `clrr info` and `clrr dump` and holds the calls made before the failure.
# `clrr record` itself refuses an output it cannot create before starting
# the application (exit 1, one line); the layer loaded directly
# (OPENCL_LAYERS + CLRR_OUTPUT) lets the application run unrecorded.
. "$(dirname "$0")/lib.sh"
need "$LAYER"; need "$CLRR"
app=$APPS/vecadd
need "$app"
args=(--size 65536 --iters 20)   # a trace of about 14 MiB
norm() { sed 's/ocl_ms=[0-9.]*//' "$1"; }
plain_rc=0
"$app" "${args[@]}" >"$TMP/plain.out" 2>"$TMP/plain.err" || plain_rc=$?
[ $plain_rc = 0 ] || fail "vecadd fails without the recorder: $(cat "$TMP/plain.err")"
skipped=()

# check NAME RC: the application's output ($TMP/NAME.out) and exit status
# are those of the plain run; one line from the recorder on stderr.
check() {
    local name=$1 rc=$2
    [ "$rc" = "$plain_rc" ] || fail "$name: exit $rc, $plain_rc without the recorder: $(head -3 "$TMP/$name.err")"
    cmp -s <(norm "$TMP/plain.out") <(norm "$TMP/$name.out") ||
        fail "$name: output differs: $(diff <(norm "$TMP/plain.out") <(norm "$TMP/$name.out") | head -5)"
    [ "$(wc -l <"$TMP/$name.err")" = 1 ] || fail "$name: expected one line on stderr, got: $(cat "$TMP/$name.err")"
    grep -q '^clrr' "$TMP/$name.err" || fail "$name: stderr line is not the recorder's: $(cat "$TMP/$name.err")"
}
# partial NAME TRACE: the partial trace opens and holds the first calls.
partial() {
    local name=$1 t=$2
    "$CLRR" info --json "$t" >"$TMP/$name.info" 2>"$TMP/$name.ierr" ||
        fail "$name: clrr info cannot open the partial trace: $(cat "$TMP/$name.ierr")"
    local calls
    calls=$(sed -n 's/.*"calls":\([0-9][0-9]*\).*/\1/p' "$TMP/$name.info" | head -1)
    [ -n "$calls" ] && [ "$calls" -ge 10 ] || fail "$name: partial trace holds ${calls:-no} calls"
    "$CLRR" dump "$t" >"$TMP/$name.dump" 2>"$TMP/$name.derr" || fail "$name: dump: $(cat "$TMP/$name.derr")"
    grep -q 'clBuildProgram' "$TMP/$name.dump" || fail "$name: no clBuildProgram in the partial trace"
    echo "$name: $calls calls kept, $(stat -c %s "$t") bytes; $(cat "$TMP/$name.err")"
}

# --- 1. file size limit (RLIMIT_FSIZE): SIGXFSZ must not reach the application
lim=4096   # KiB: PoCL's own cache files fit, the trace does not
rc=0; (ulimit -f $lim; exec "$app" "${args[@]}") >"$TMP/lim-plain.out" 2>&1 || rc=$?
if [ $rc != 0 ]; then
    skipped+=("file size limit (vecadd fails under ulimit -f $lim without the recorder: rc $rc)")
else
    rc=0; (ulimit -f $lim; OPENCL_LAYERS=$LAYER CLRR_OUTPUT=$TMP/fsize.clrr exec "$app" "${args[@]}") \
        >"$TMP/fsize.out" 2>"$TMP/fsize.err" || rc=$?
    check fsize $rc
    grep -q 'File too large' "$TMP/fsize.err" || fail "fsize: the line does not say why: $(cat "$TMP/fsize.err")"
    [ "$(stat -c %s "$TMP/fsize.clrr")" -le $((lim * 1024)) ] || fail "fsize: trace larger than the limit"
    partial fsize "$TMP/fsize.clrr"
    "$CLRR" replay -q "$TMP/fsize.clrr" >"$TMP/fsize.rp" 2>&1 ||
        fail "fsize: the partial trace does not replay: $(tail -3 "$TMP/fsize.rp")"
    rc=0; (ulimit -f $lim; exec "$CLRR" record -o "$TMP/fsize2.clrr" -- "$app" "${args[@]}") \
        >"$TMP/fsize2.out" 2>"$TMP/fsize2.err" || rc=$?
    check fsize2 $rc
    partial fsize2 "$TMP/fsize2.clrr"
    # a limit just under the whole trace: the last records, the index or the
    # trailer hit it while the application exits
    OPENCL_LAYERS=$LAYER CLRR_OUTPUT=$TMP/whole.clrr "$app" "${args[@]}" >/dev/null 2>&1 ||
        fail "recording vecadd without a limit failed"
    end=$(( ($(stat -c %s "$TMP/whole.clrr") - 1200) / 1024 ))   # sizes vary by a few hundred bytes
    rc=0; (ulimit -f $end; OPENCL_LAYERS=$LAYER CLRR_OUTPUT=$TMP/fend.clrr exec "$app" "${args[@]}") \
        >"$TMP/fend.out" 2>"$TMP/fend.err" || rc=$?
    check fend $rc
    partial fend "$TMP/fend.clrr"
fi

# --- 1b. exact limits, with a driver that writes no file of its own (the stub
# ICD; PoCL's LLVM also happens to catch the first SIGXFSZ): limit 0 (the
# file header, written at open on the application's thread) and a limit a
# few bytes under the whole trace (the last writes, at exit). The output
# goes through pipes, which the limit does not apply to.
STUB_VEND=$B/stub-vendors TOUR=$B/tests/progs/api_tour
# piped NAME CMD...: CMD's stdout and stderr into $TMP/NAME.out and .err
piped() {
    local n=$1; shift
    ( ( "$@" 2>&1 1>&4 4>&-; echo $? >"$TMP/$n.rc" ) | cat >"$TMP/$n.err" ) 4>&1 | cat >"$TMP/$n.out"
    return "$(cat "$TMP/$n.rc")"
}
if ! command -v prlimit >/dev/null; then
    skipped+=("exact file size limits (no prlimit)")
elif [ ! -e "$STUB_VEND/clrrstub.icd" ] || [ ! -x "$TOUR" ]; then
    skipped+=("exact file size limits (no stub driver or api_tour)")
else
    export OCL_ICD_VENDORS; OCL_ICD_VENDORS=$(realpath "$STUB_VEND")
    src=0; piped stub "$TOUR" || src=$?
    # stubcheck NAME RC: the stub run's output, exit status and stderr plus one line
    stubcheck() {
        [ "$2" = "$src" ] || fail "$1: exit $2, $src without the recorder: $(cat "$TMP/$1.err")"
        cmp -s "$TMP/stub.out" "$TMP/$1.out" || fail "$1: output differs"
        cmp -s "$TMP/stub.err" <(grep -v '^clrr: ' "$TMP/$1.err") || fail "$1: stderr differs: $(cat "$TMP/$1.err")"
        [ "$(grep -c '^clrr: ' "$TMP/$1.err")" = 1 ] || fail "$1: expected one line of the recorder: $(cat "$TMP/$1.err")"
        grep -q 'File too large' "$TMP/$1.err" || fail "$1: $(cat "$TMP/$1.err")"
        echo "$1: $(grep '^clrr: ' "$TMP/$1.err")"
    }
    rc=0; piped zero prlimit --fsize=0 env OPENCL_LAYERS="$LAYER" CLRR_OUTPUT="$TMP/zero.clrr" "$TOUR" || rc=$?
    stubcheck zero $rc
    hit=0
    for i in 1 2 3 4 5 6; do
        OPENCL_LAYERS=$LAYER CLRR_OUTPUT=$TMP/sw.clrr "$TOUR" >/dev/null 2>&1
        size=$(stat -c %s "$TMP/sw.clrr")
        rc=0; piped send prlimit --fsize=$((size - 40)) env OPENCL_LAYERS="$LAYER" CLRR_OUTPUT="$TMP/se.clrr" "$TOUR" || rc=$?
        [ "$rc" = "$src" ] || fail "send: exit $rc (a limit $((size - 40)) bytes), $src without the recorder"
        grep -q '^clrr: ' "$TMP/send.err" || continue   # this trace happened to fit
        stubcheck send $rc
        "$CLRR" info "$TMP/se.clrr" >/dev/null 2>&1 || fail "send: clrr info cannot read the partial trace"
        hit=1
        break
    done
    [ $hit = 1 ] || fail "send: no run reached the limit"
    unset OCL_ICD_VENDORS
fi

# --- 2. a full file system: a 2 MiB tmpfs in a private mount namespace
mkdir -p "$TMP/mnt"
if unshare -rm true 2>/dev/null; then
    rc=0
    unshare -rm sh -c 'mount -t tmpfs -o size=2m tmpfs "$1" || exit 99; shift
        rc=0; "$@" || rc=$?; cp "$0/mnt/full.clrr" "$0/full.clrr"; exit $rc' \
        "$TMP" "$TMP/mnt" env OPENCL_LAYERS="$LAYER" CLRR_OUTPUT="$TMP/mnt/full.clrr" \
        "$app" "${args[@]}" >"$TMP/full.out" 2>"$TMP/full.err" || rc=$?
    if [ $rc = 99 ]; then
        skipped+=("tmpfs (mount not permitted in a user namespace)")
    else
        check full $rc
        grep -q 'No space left' "$TMP/full.err" || fail "full: the line does not say why: $(cat "$TMP/full.err")"
        partial full "$TMP/full.clrr"
    fi
else
    skipped+=("tmpfs (unshare -rm not permitted)")
fi
# /dev/full: the file header cannot be written; nothing is recorded
rc=0; OPENCL_LAYERS=$LAYER CLRR_OUTPUT=/dev/full "$app" "${args[@]}" >"$TMP/devfull.out" 2>"$TMP/devfull.err" || rc=$?
check devfull $rc
rc=0; "$CLRR" record -o /dev/full -- "$app" "${args[@]}" >"$TMP/devfull2.out" 2>"$TMP/devfull2.err" || rc=$?
check devfull2 $rc
rc=0; "$CLRR" record -o /dev/null -- "$app" "${args[@]}" >"$TMP/devnull.out" 2>"$TMP/devnull.err" || rc=$?
[ $rc = 0 ] && [ ! -s "$TMP/devnull.err" ] || fail "recording to /dev/null: exit $rc: $(cat "$TMP/devnull.err")"

# --- 3. unwritable outputs
mkdir -p "$TMP/adir" "$TMP/ro"
# unwritable NAME PATH [WRAPPER...]: through the layer the application runs
# unrecorded; `clrr record` fails early (exit 1, one line, the command not run).
unwritable() {
    local name=$1 out=$2 rc=0; shift 2
    "$@" env OPENCL_LAYERS="$LAYER" CLRR_OUTPUT="$out" "$app" "${args[@]}" \
        >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
    check "$name" $rc
    grep -q 'cannot create trace' "$TMP/$name.err" || fail "$name: $(cat "$TMP/$name.err")"
    rc=0; "$@" "$CLRR" record -o "$out" -- "$app" "${args[@]}" >"$TMP/$name.rec.out" 2>"$TMP/$name.rec.err" || rc=$?
    [ $rc = 1 ] || fail "$name: clrr record exit $rc, expected 1: $(cat "$TMP/$name.rec.err")"
    [ "$(wc -l <"$TMP/$name.rec.err")" = 1 ] || fail "$name: clrr record: $(cat "$TMP/$name.rec.err")"
    [ ! -s "$TMP/$name.rec.out" ] || fail "$name: clrr record ran the command"
    echo "$name: $(cat "$TMP/$name.err")"
}
unwritable missing "$TMP/no/such/dir/t.clrr"
unwritable isdir "$TMP/adir"
# where access() says yes and creating says no (root in /proc)
unwritable proc "/proc/clrr-e2e-$$.clrr"
# a read-only directory: permissions for a user, a read-only mount for root
if [ "$(id -u)" != 0 ]; then
    chmod 555 "$TMP/ro"
    unwritable rodir "$TMP/ro/t.clrr"
    chmod 755 "$TMP/ro"
elif unshare -rm sh -c 'mount -t tmpfs -o ro tmpfs "$1"' sh "$TMP/ro" 2>/dev/null; then
    unwritable rodir "$TMP/ro/t.clrr" unshare -rm sh -c 'mount -t tmpfs -o ro,size=1m tmpfs "$0" && exec "$@"' "$TMP/ro"
else
    skipped+=("read-only directory (running as root without mount namespaces)")
fi
for s in "${skipped[@]}"; do echo "skipped: $s"; done
echo "unwritable traces: the application unaffected, one line on stderr, partial traces readable"
