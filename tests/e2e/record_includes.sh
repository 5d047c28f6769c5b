#!/usr/bin/env bash
# record_includes.sh BUILD_DIR — program sources that #include headers
# beside them (issue 33 item 2) and traces whose sources include host files
# (issue 34 item 6). On PoCL:
#   - include_prog, run from tests/progs/include_prog/ (its "./inc.h",
#     "sub/other.h" -> "deep.h", "../inc.h", <angled.h> through -Isub), is
#     recorded with those headers in clBuildProgram's post.headers, and
#     replays verified from a directory that has none of them; so does its
#     --compile mode (clCompileProgram with an input header, clLinkProgram);
#   - the same trace with post.headers removed, replayed in the directory
#     that holds the headers, fails: a replay never reads the host's;
#   - a trace whose source includes "/etc/passwd" is refused with one line
#     that names it and prints none of its content;
#   - build options that name a host file (-include) are refused;
#   - clrr analyze compiles the recorded headers (from anywhere) and never
#     the host's (the trace without them fails to compile beside them);
#   - clrr optimize's rewrites (a forced coarsening) start from the source
#     with the recorded headers inlined: generated and replayed with the
#     plan away from the headers.
. "$(dirname "$0")/lib.sh"
need "$CLRR"; need "$LAYER"
unset OPENCL_LAYERS LD_PRELOAD OCL_ICD_VENDORS POCL_DEVICES
PROG=$(cd "$B" && pwd)/tests/progs/include_prog
need "$PROG"; need "$B/tests/fuzz-pack"
[ -f /etc/OpenCL/vendors/pocl.icd ] || skip "no PoCL ICD"
CLRR=$(cd "$(dirname "$CLRR")" && pwd)/clrr
SRC=$(cd "$(dirname "$0")/../progs/include_prog" && pwd)
CORRUPT=$(cd "$(dirname "$0")/../corrupt" && pwd)

# --- record where the headers are, replay where they are not
(cd "$SRC" && "$CLRR" record -o "$TMP/inc.clrr" -- "$PROG") >"$TMP/rec.out" 2>&1 ||
    fail "clrr record -- include_prog: $(tail -3 "$TMP/rec.out")"
grep -q '^include_prog: ok' "$TMP/rec.out" || fail "include_prog under the recorder: $(cat "$TMP/rec.out")"
"$CLRR" dump "$TMP/inc.clrr" >"$TMP/dump" || fail "clrr dump"
b=$(grep '\] clBuildProgram(' "$TMP/dump")
for h in inc.h sub/other.h sub/deep.h sub/angled.h; do
    echo "$b" | grep -q "headers={.*$h=<[0-9]* B blob" || fail "header $h is not in the trace: $b"
done
mkdir -p "$TMP/elsewhere"
(cd "$TMP/elsewhere" && "$CLRR" replay "$TMP/inc.clrr") >"$TMP/rep.out" 2>"$TMP/rep.err" ||
    fail "replay away from the headers: $(cat "$TMP/rep.err")"
grep -q '^verified  1 read-backs, 0 mismatches' "$TMP/rep.out" && grep -q '^result    ok' "$TMP/rep.out" ||
    fail "replay away from the headers: $(cat "$TMP/rep.out")"

# clCompileProgram (and a link) of the same source, with one more header
# given as an input header program: recorded headers, not the input one
(cd "$SRC" && "$CLRR" record -o "$TMP/comp.clrr" -- "$PROG" --compile) >"$TMP/crec.out" 2>&1 ||
    fail "clrr record -- include_prog --compile: $(tail -3 "$TMP/crec.out")"
b=$("$CLRR" dump "$TMP/comp.clrr" | grep '\] clCompileProgram(')
echo "$b" | grep -q 'headers={.*sub/other.h=<' && ! echo "$b" | grep -q 'emb.h=<\|headers_missing' ||
    fail "clCompileProgram's headers: $b"
(cd "$TMP/elsewhere" && "$CLRR" replay "$TMP/comp.clrr") >"$TMP/crep.out" 2>"$TMP/crep.err" &&
    grep -q '^verified  1 read-backs, 0 mismatches' "$TMP/crep.out" ||
    fail "replay of the compiled program away from the headers: $(cat "$TMP/crep.err" "$TMP/crep.out")"

# --- the host's headers are never used: the trace without its headers,
# replayed beside them, fails and says which is missing
python3 - "$B" "$TMP" "$CORRUPT" <<'PY' || fail "could not edit the traces"
import sys
build, tmp, corrupt = sys.argv[1:4]
sys.path.insert(0, corrupt)
import make
def strip(r):
    if r[0] == 3 and isinstance(r[5], dict) and "headers" in r[5]:
        r[5] = {k: v for k, v in r[5].items() if k != "headers"} or None
    return r
make.Sections(build, tmp + "/inc.clrr", tmp).edit_records("noheaders.clrr", strip)
def include_opt(r):
    if r[0] == 2 and isinstance(r[5], list) and r[5][3:4] == ["-I. -Isub"]:
        r[5][3] = "-I. -Isub -include /etc/passwd"
    return r
make.Sections(build, tmp + "/inc.clrr", tmp).edit_records("incopt.clrr", include_opt)
PY
[ -f "$TMP/noheaders.clrr" ] || fail "no edited trace"
rc=0
(cd "$SRC" && "$CLRR" replay "$TMP/noheaders.clrr") >"$TMP/nh.out" 2>"$TMP/nh.err" || rc=$?
# (PoCL itself prints "3 errors generated." on stderr: clrr's own answer is one line)
[ $rc -eq 3 ] && [ "$(grep -c '^clrr' "$TMP/nh.err")" -eq 1 ] &&
    grep -q '^clrr replay: .*call #6 clBuildProgram: .*no header recorded with the trace is named ./inc.h' "$TMP/nh.err" ||
    fail "a trace without its headers, replayed beside them: exit $rc, $(cat "$TMP/nh.err")"

# --- the analysis compiles the recorded headers, never the host's
(cd "$TMP/elsewhere" && "$CLRR" analyze "$TMP/inc.clrr") >"$TMP/ana.out" 2>&1 || fail "clrr analyze: $(cat "$TMP/ana.out")"
grep -q '^      0 a  *int\*  *global   write, every offset known' "$TMP/ana.out" ||
    fail "the include program was not analyzed: $(cat "$TMP/ana.out")"
(cd "$SRC" && "$CLRR" analyze "$TMP/noheaders.clrr") >"$TMP/ana2.out" 2>&1 || fail "clrr analyze: $(cat "$TMP/ana2.out")"
grep -q 'not analyzed: does not compile: .*clrr: no header recorded with the trace is named ./inc.h' "$TMP/ana2.out" ||
    fail "the analysis of a trace without its headers used the host's: $(cat "$TMP/ana2.out")"

# --- the optimizer's rewrites start from the recorded headers inlined: a
# coarsened kernel of the include program (forced: kept whatever its time)
# is generated from anywhere and its plan replays verified away from the
# headers (before, the rewriter saw the bare source: "'./inc.h' file not
# found", and nothing was coarsened in Parboil's programs on the H200)
(cd "$TMP/elsewhere" && "$CLRR" optimize "$TMP/inc.clrr" -o "$TMP/inc.plan" --tune=rapid --budget 90 \
    --tune-force=coarsen:2) >"$TMP/co.out" 2>"$TMP/co.err" || fail "clrr optimize: $(cat "$TMP/co.out" "$TMP/co.err")"
grep -q "^clrr optimize: tune: fill (launch [0-9][^)]*): coarsened by 2 along dimension 0 (blocked): .*forced by --tune-force" \
    "$TMP/co.err" || fail "the include program's kernel was not coarsened: $(cat "$TMP/co.err")"
grep -q "^verified  the plan replayed here" "$TMP/co.out" || fail "the coarsened plan: $(cat "$TMP/co.out")"
python3 - "$TMP/inc.plan" <<'PY' || fail "the coarsened source: $(cat "$TMP/inc.plan")"
import json, sys
c, = json.load(open(sys.argv[1]))["coarsenings"]
assert "#include" not in c["source"] and "other_add" in c["source"], c["source"]
PY
(cd "$TMP/elsewhere" && "$CLRR" replay --plan "$TMP/inc.plan" "$TMP/inc.clrr") >"$TMP/cop.out" 2>"$TMP/cop.err" &&
    grep -q '^verified  1 read-backs, 0 mismatches' "$TMP/cop.out" ||
    fail "replay --plan of the coarsened include program: $(cat "$TMP/cop.err" "$TMP/cop.out")"

rc=0
"$CLRR" replay "$TMP/incopt.clrr" >"$TMP/io.out" 2>"$TMP/io.err" || rc=$?
[ $rc -eq 3 ] && [ "$(wc -l <"$TMP/io.err")" -eq 1 ] &&
    grep -q '^clrr replay: .*build options of program #5 name a file of this machine (-include): refused' "$TMP/io.err" ||
    fail "build options with -include: exit $rc, $(cat "$TMP/io.err")"

# --- a source that includes a host file
mkdir -p "$TMP/tiny"
echo '#define T 7' >"$TMP/tiny/tiny.h"
(cd "$TMP/tiny" && "$CLRR" record -o "$TMP/tiny.clrr" -- "$PROG" --tiny ./tiny.h) >"$TMP/tiny.out" 2>&1 ||
    fail "clrr record -- include_prog --tiny: $(tail -3 "$TMP/tiny.out")"
(cd "$TMP/elsewhere" && "$CLRR" replay "$TMP/tiny.clrr") >"$TMP/t.out" 2>"$TMP/t.err" ||
    fail "replay of the tiny trace: $(cat "$TMP/t.err")"
# the source of the tiny trace (inline bytes) rewritten: every spelling of
# an include of a host file that the preprocessor reads as one
python3 - "$B" "$TMP" "$CORRUPT" <<'PY' || fail "could not edit the tiny trace"
import sys
build, tmp, corrupt = sys.argv[1:4]
sys.path.insert(0, corrupt)
import make
variants = [
    b'#include "/etc/passwd"',
    b'??=include "/etc/passwd"',
    b'%:include "/etc/passwd"',
    b'#inc\\\nlude "/etc/passwd"',
    b'#inc\\  \nlude "/etc/passwd"',
    b'# /* a comment */ include "/etc/passwd"',
    b'/* a\ncomment */ #include "/etc/passwd"',
    b'#include "../../../../../../../../etc/passwd"',
    b'#include_next </etc/passwd>',
    b'#import "/etc/passwd"',
    b'#define P "/etc/passwd"\n#include P',
]
S = make.Sections(build, tmp + "/tiny.clrr", tmp)
for n, v in enumerate(variants):
    seen = []
    def hostile(r):
        if r[0] == 2 and isinstance(r[5], list):
            for k, a in enumerate(r[5]):
                if isinstance(a, bytes) and b'#include "./tiny.h"' in a:
                    r[5][k] = a.replace(b'#include "./tiny.h"', v)
                    seen.append(1)
        return r
    S.edit_records("passwd%d.clrr" % n, hostile)
    if not seen:
        sys.exit(1)
print(len(variants))
PY
first=$(head -1 /etc/passwd | cut -d: -f1,2)
for f in "$TMP"/passwd*.clrr; do
    n=${f##*passwd}; n=${n%.clrr}
    rc=0
    (cd "$TMP/elsewhere" && "$CLRR" replay "$f") >"$TMP/p.out" 2>"$TMP/p.err" || rc=$?
    [ $rc -eq 3 ] && [ "$(grep -c '^clrr' "$TMP/p.err")" -eq 1 ] &&
        grep -q '^clrr replay: .*clrr: \(no header recorded with the trace is named .*etc/passwd\|an include whose name is not a plain\)' "$TMP/p.err" ||
        fail "$(basename "$f"), a source including /etc/passwd: exit $rc, $(cat "$TMP/p.err")"
    ! grep -qF "$first:" "$TMP/p.err" "$TMP/p.out" || fail "clrr replay printed /etc/passwd: $(cat "$TMP/p.err")"
    [ "$n" -lt 2 ] || [ "$n" -eq 10 ] || continue   # the analysis of a few (the same code as the replay's)
    (cd "$TMP/elsewhere" && "$CLRR" analyze "$f") >"$TMP/pa.out" 2>&1 || fail "clrr analyze: $(cat "$TMP/pa.out")"
    grep -q 'not analyzed: does not compile: .*clrr: \(no header recorded with the trace is named .*etc/passwd\|an include whose\)' "$TMP/pa.out" ||
        fail "$(basename "$f"), the analysis of a source including /etc/passwd: $(cat "$TMP/pa.out")"
    ! grep -qF "$first:" "$TMP/pa.out" || fail "clrr analyze printed /etc/passwd: $(cat "$TMP/pa.out")"
done
echo "ok: headers recorded with the build, replayed from the trace only; host includes refused"
