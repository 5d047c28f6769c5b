#!/usr/bin/env bash
# replay_cross.sh BUILD_DIR — traces replay on other devices than the one
# they were recorded on, with every read-back verified (floats within a
# tolerance): recorded on PoCL's default device, replayed on PoCL's
# single-threaded "basic" device, with --device cpu, and on the Oclgrind
# simulator (OCL_ICD_VENDORS naming it alone); a trace recorded on two devices (POCL_DEVICES="pthread
# pthread", vecadd --devices 2) replays onto one device with --device 0.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES CLRR_APP_DEVICE
TOL=rel=1e-5,abs=1e-6
PY=/usr/bin/python3

"$CLRR" devices 2>/dev/null | grep -q 'pthread' || skip "PoCL's pthread device is not the default device here"

# record NAME APP ARGS...: records APP into NAME.clrr
record() {
    local name=$1 app=$2; shift 2
    "$CLRR" record -o "$TMP/$name.clrr" -- "$APPS/$app" "$@" --quiet >"$TMP/$name.rec" 2>&1 ||
        fail "$name: clrr record: $(tail -3 "$TMP/$name.rec")"
}
# replay NAME LABEL [OPTIONS]: replays NAME.clrr (--json into NAME.LABEL.json): exit 0,
# nothing on stderr, read-backs verified, no mismatch; prints the device line
replay() {
    local name=$1 label=$2; shift 2
    local out=$TMP/$name.$label rc=0
    "$CLRR" replay --json "$@" "$TMP/$name.clrr" >"$out.json" 2>"$out.err" || rc=$?
    [ $rc -eq 0 ] || fail "$name ($label): clrr replay $*: exit $rc: $(head -3 "$out.err") $(head -c 600 "$out.json")"
    [ ! -s "$out.err" ] || fail "$name ($label): clrr replay $* wrote to stderr: $(head -3 "$out.err")"
    $PY - "$out.json" >"$out.dev" <<'EOF' || fail "$name ($label): clrr replay $*: $(cat "$out.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["readbacks"] > 0, d
assert d["mismatches"] == 0 and d["unverified"] == 0, d["mismatch_list"]
print(d["device"])
print(d["recorded_device"])
EOF
}
# device NAME LABEL / recorded NAME LABEL: the replay's device, the recorded one
device() { sed -n 1p "$TMP/$1.$2.dev"; }
recorded() { sed -n 2p "$TMP/$1.$2.dev"; }

record vecadd vecadd --size 8192 --iters 2
record blackscholes blackscholes --size 4096
record sobel sobel --size 64
record histogram histogram --size 65536
for name in vecadd blackscholes sobel histogram; do
    tol=(); [ $name = blackscholes ] && tol=(--tolerance "$TOL")
    replay $name same "${tol[@]}"
    [ "$(device $name same)" = "$(recorded $name same)" ] || fail "$name: replayed on $(device $name same), not on the recorded device"
    # PoCL's single-threaded device: another device of the same platform
    POCL_DEVICES=basic replay $name basic "${tol[@]}"
    [ "$(device $name basic)" != "$(recorded $name basic)" ] ||
        fail "$name: POCL_DEVICES=basic replayed on the recorded device $(device $name basic)"
    case $(device $name basic) in basic*) ;; *) fail "$name: POCL_DEVICES=basic replayed on $(device $name basic)";; esac
    replay $name cpu --device cpu "${tol[@]}"
    case $(device $name cpu) in *"(CPU)") ;; *) fail "$name: --device cpu replayed on $(device $name cpu)";; esac
done

# --- two devices recorded, one device here
POCL_DEVICES="pthread pthread" record vecadd2 vecadd --size 8192 --devices 2
"$CLRR" info --json "$TMP/vecadd2.clrr" >"$TMP/vecadd2.info" || fail "clrr info vecadd2"
$PY -c 'import json, sys; i = json.load(open(sys.argv[1])); assert i["kernel_launches"] == 2, i' "$TMP/vecadd2.info" ||
    fail "vecadd --devices 2 did not launch one kernel per device: $(head -c 400 "$TMP/vecadd2.info")"
POCL_DEVICES="pthread pthread" replay vecadd2 two
replay vecadd2 one --device 0
POCL_DEVICES=basic replay vecadd2 basic --device 0

# --- the Oclgrind simulator (slow: tiny sizes)
OG=/usr/lib/oclgrind/liboclgrind-rt-icd.so
if [ -f "$OG" ]; then
    mkdir -p "$TMP/vendors"
    echo "$OG" >"$TMP/vendors/oclgrind.icd"
    record vecadd_tiny vecadd --size 4096
    record bs_tiny blackscholes --size 1024
    OCL_ICD_VENDORS=$TMP/vendors replay vecadd_tiny oclgrind
    OCL_ICD_VENDORS=$TMP/vendors replay bs_tiny oclgrind --tolerance "$TOL"
    OCL_ICD_VENDORS=$TMP/vendors replay sobel oclgrind --tolerance "$TOL"
    OCL_ICD_VENDORS=$TMP/vendors replay histogram oclgrind
    for name in vecadd_tiny bs_tiny sobel histogram; do
        case $(device $name oclgrind) in Oclgrind*) ;; *) fail "$name: replayed on $(device $name oclgrind), not Oclgrind";; esac
    done
    og="; Oclgrind"
else
    og="; Oclgrind not installed"
fi
echo "ok: replayed on $(device vecadd basic), with --device cpu, two devices onto one$og"
