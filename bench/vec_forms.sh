#!/usr/bin/env bash
# vec_forms.sh [BUILD_DIR] — the vector form of coarsening measured beside
# the blocked one (issue 36 item 3): records vecadd, exposure and SHOC's
# Triad (when ~/.cache/clrr/suites/shoc is built), then for ROUNDS rounds
# alternates `clrr optimize --tune=rapid --tune-force=coarsen:4`, and
# `--tune-force=vector:F` for F = 4, 8, 16: each run times every launch
# shape as recorded and coarsened, alternated (--measure REPS runs each),
# and says "coarsened by F ... (form): X ms instead of Y". The table (to
# $OUT/vec_forms.md, default bench/results/vec_forms.md) gives per kernel
# and form the median over rounds of the plain and coarsened medians, the
# range, and the rewriter's refusals. On this 2-core machine the numbers
# are noisy; on a GPU machine run: OUT=$OUT bash bench/vec_forms.sh build
# (then the tuners' logs are in $OUT/vec_forms.logs too)
set -u
B=${1:-build}
CLRR=$B/bin/clrr
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-7}
OUT=${OUT:-bench/results}
W=$(mktemp -d)
trap '[ "$OUT" = bench/results ] || cp "$W"/*.err "$OUT"/vec_forms.logs/ 2>/dev/null; rm -rf "$W"' EXIT
export CLRR_COSTS=$W/costs CLRR_VERIFIED=$W/verified
printf 'clrr-costs\t1\nl\ttest\t1\t0\t0\t0\n' >"$CLRR_COSTS"
apps=("vecadd|$B/apps/vecadd --size 4194304" "exposure|$B/apps/exposure --size 1024")
T=$HOME/.cache/clrr/suites/shoc/build/src/opencl/level1/triad/Triad
[ -x "$T" ] && apps+=("triad|$T -s 4 --passes 1")
forms=("coarsen:4" "vector:4" "vector:8" "vector:16")
for a in "${apps[@]}"; do
    name=${a%%|*}; cmd=${a#*|}
    (cd "$W" && $cmd >/dev/null 2>&1) || true
    "$CLRR" record -o "$W/$name.clrr" -- $cmd >/dev/null 2>&1 || { echo "recording $name failed" >&2; continue; }
    for r in $(seq "$ROUNDS"); do
        for f in "${forms[@]}"; do
            nice "$CLRR" optimize "$W/$name.clrr" -o "$W/x.plan" --tune=rapid --budget 60 --measure="$REPS" \
                --tune-force="$f" >/dev/null 2>"$W/$name.$f.$r.err" || true
        done
    done
done
mkdir -p "$OUT"; [ "$OUT" = bench/results ] || mkdir -p "$OUT/vec_forms.logs"
python3 - "$W" "$OUT/vec_forms.md" "$ROUNDS" "$REPS" <<'PY'
import glob, os, re, statistics, sys
w, out, rounds, reps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows, refused = {}, {}
pat = re.compile(r"tune: (\w+) \(launch (\d+)(?:, \d+ launch(?:es)?)?\): coarsened by (\d+) along dimension 0 \((\w+)\): ([0-9.]+) ms instead of ([0-9.]+)")
ref = re.compile(r"tune: (\w+) \(launch \d+(?:, \d+ launch(?:es)?)?\): not coarsened: (.*)")
for f in sorted(glob.glob(os.path.join(w, "*.err"))):
    app = os.path.basename(f).split(".")[0]
    for line in open(f):
        m = pat.search(line)
        if m:
            k, seq, fac, form, after, before = m.groups()
            rows.setdefault((app, k, int(seq), form + " " + fac), []).append((float(before), float(after)))
            continue
        m = ref.search(line)
        if m:
            refused.setdefault((app, m.group(1)), set()).add(m.group(2).strip())
with open(out, "w") as o:
    o.write(f"# Coarsening forms on {os.uname().nodename} (bench/vec_forms.sh: {rounds} rounds, --measure {reps}, alternated)\n\n")
    o.write("One row per launch shape (its first launch's number) and form: the medians over rounds of the\n"
            "tuner's medians of the launch replayed as recorded and coarsened, alternated in one session.\n\n")
    o.write("| app | kernel | launch | form | plain ms | coarsened ms | speed-up | coarsened range |\n|---|---|---|---|---|---|---|---|\n")
    for (app, k, seq, form), v in sorted(rows.items()):
        b = statistics.median(x for x, _ in v); a = statistics.median(y for _, y in v)
        o.write(f"| {app} | {k} | {seq} | {form} | {b:.3f} | {a:.3f} | {b / a:.2f}x | {min(y for _, y in v):.3f}-{max(y for _, y in v):.3f} |\n")
    o.write("\nNot coarsened (the reasons said):\n\n")
    for (app, k), why in sorted(refused.items()):
        o.write(f"- {app} {k}: {'; '.join(sorted(why))}\n")
print(open(out).read())
PY
