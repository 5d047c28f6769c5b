#!/usr/bin/env bash
# docs_env.sh BUILD_DIR — docs/environment.md names every CLRR_* variable
# that clrr and the programs of this repository read (string literals
# "CLRR_..." in the handwritten C sources, the recorder's REC_CONTROLS
# table, the test and bench scripts), and names none that nothing reads.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
doc=$root/docs/environment.md
[ -f "$doc" ] || fail "no docs/environment.md"
cd "$root" || exit 1
# read: C string literals (getenv/setenv and tables), REC_CONTROLS' ENV
# suffixes (recorder/rec.h: X(type, field, ENV, ...)), ${CLRR_...} and
# os.environ in scripts
{
    git ls-files '*.c' '*.h' | xargs grep -ohE '"CLRR_[A-Z0-9_]+"' | tr -d '"'
    sed -n '/^#define REC_CONTROLS/,/^$/p' recorder/rec.h | grep -oE '^ *X\([a-z0-9]+, *[a-z0-9_]+, *[A-Z0-9_]+' |
        sed -E 's/.*, *([A-Z0-9_]+)$/CLRR_\1/'
    git ls-files '*.sh' '*.py' 'tests/*' 'bench/*' | xargs grep -ohE '\$\{?CLRR_[A-Z0-9_]+|environ(\.get)?[\[(]"CLRR_[A-Z0-9_]+' 2>/dev/null |
        grep -oE 'CLRR_[A-Z0-9_]+'
} | grep -vxE 'CLRR_' | sort -u >"$TMP/read"
grep -oE '`CLRR_[A-Z0-9_]+`' "$doc" | tr -d '`' | sort -u >"$TMP/doc"
[ "$(wc -l <"$TMP/read")" -ge 20 ] || fail "found only $(wc -l <"$TMP/read") variables in the sources: the scan is broken"
missing=$(comm -23 "$TMP/read" "$TMP/doc")
[ -z "$missing" ] || fail "read but not in docs/environment.md: $(echo $missing)"
extra=$(comm -13 "$TMP/read" "$TMP/doc")
[ -z "$extra" ] || fail "in docs/environment.md but read nowhere: $(echo $extra)"
echo "ok: $(wc -l <"$TMP/read") variables, each documented"
