#!/usr/bin/env bash
# cli_man.sh BUILD_DIR — the manual pages and the bash completion that the
# build makes from the usage strings (tools/cli_ref.py): there is a page per
# command of `clrr --help` and clrr.1; each renders with groff without a
# warning, and `man -l` shows it; each command's page lists every option its
# usage string lists (taken here from `clrr help CMD`, not through the
# generator), and clrr.1 every command, every exit status and every CLRR_*
# variable of docs/environment.md. The completion completes commands, the
# arguments of `clrr help`, and each command's options.
. "$(dirname "$0")/lib.sh"
need "$CLRR"
M=$B/man
C=$B/completion/clrr
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
[ -f "$M/clrr.1" ] || fail "no $M/clrr.1: the build makes the manual pages"
[ -f "$C" ] || fail "no $C: the build makes the bash completion"
command -v groff >/dev/null || skip "groff is not installed"

render() {   # render PAGE: plain text, one long line per paragraph, no hyphens
    groff -man -Tutf8 -ww -rLL=400n -rHY=0 -P-cbou "$1" 2>"$TMP/warn" | sed 's/‐/-/g' >"$TMP/page"
    [ ! -s "$TMP/warn" ] || fail "$(basename "$1"): groff warns: $(head -3 "$TMP/warn")"
}
cmds=$("$CLRR" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF>1 {print $1}')
n=0
for c in $cmds; do
    p=$M/clrr-$c.1
    [ -f "$p" ] || fail "no manual page for clrr $c"
    render "$p"
    grep -q "^NAME" "$TMP/page" && grep -q "^SYNOPSIS" "$TMP/page" && grep -q "^EXIT STATUS" "$TMP/page" ||
        fail "clrr-$c.1 lacks NAME, SYNOPSIS or EXIT STATUS: $(head -20 "$TMP/page")"
    grep -q "clrr-$c - " "$TMP/page" || fail "clrr-$c.1: NAME does not say clrr-$c"
    # every option of the usage string's option lines
    opts=$("$CLRR" help "$c" | grep -E '^  -' | grep -oE -- '(^|[ ,[])--?[A-Za-z][-A-Za-z0-9]*' | sed 's/^[ ,[]//' | sort -u)
    [ -n "$opts" ] || fail "clrr help $c lists no option"
    for o in $opts; do
        grep -qE -- "(^|[^-A-Za-z0-9])$o([^-A-Za-z0-9]|$)" "$TMP/page" || fail "clrr-$c.1 does not list $o"
        n=$((n + 1))
        # the completion offers it
        got=$(bash -c 'source "$1"; COMP_WORDS=(clrr "$2" "$3"); COMP_CWORD=2; _clrr; printf "%s\n" "${COMPREPLY[@]}"' _ "$C" "$c" "$o")
        printf '%s\n' "$got" | grep -qx -- "$o" || fail "completion of 'clrr $c $o' does not offer it: $got"
    done
    MANPAGER=cat MANWIDTH=100 man -l "$p" >"$TMP/man.out" 2>"$TMP/man.err" </dev/null || fail "man -l clrr-$c.1: $(cat "$TMP/man.err")"
    grep -q "clrr-$c" "$TMP/man.out" || fail "man -l clrr-$c.1 shows: $(head -5 "$TMP/man.out")"
done
# no page for a command that is not there
for p in "$M"/clrr-*.1; do
    c=${p##*/clrr-}; c=${c%.1}
    printf '%s\n' $cmds | grep -qx "$c" || fail "a manual page for a command clrr does not have: $p"
done

render "$M/clrr.1"
for c in $cmds; do grep -q "clrr-$c(1)" "$TMP/page" || fail "clrr.1 does not list clrr-$c(1)"; done
for s in 0 1 2 3; do grep -qE "^ +$s  " "$TMP/page" || fail "clrr.1: no exit status $s"; done
grep -q "^ENVIRONMENT" "$TMP/page" || fail "clrr.1 has no ENVIRONMENT section"
for v in $(grep -oE '^\| `CLRR_[A-Z0-9_]+`' "$DOCS/environment.md" | tr -d '|` '); do
    grep -qE "^ +$v\$" "$TMP/page" || fail "clrr.1's ENVIRONMENT does not list $v"
done
for v in CLRR_LOADER CLRR_RW_LIB CLRR_SPLIT_METHOD; do
    grep -qE "^ +$v\$" "$TMP/page" || fail "clrr.1's ENVIRONMENT does not list $v"
done

# completion: commands, `clrr help`'s argument, files after the options
comp() { bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _clrr; echo "${COMPREPLY[*]}"' _ "$C" "$@"; }
[ "$(comp clrr repl)" = replay ] || fail "completion of 'clrr repl': $(comp clrr repl)"
[ "$(comp clrr rep)" = "report replay" ] || fail "completion of 'clrr rep': $(comp clrr rep)"
[ "$(comp clrr help pro)" = profile ] || fail "completion of 'clrr help pro': $(comp clrr help pro)"
[ "$(comp clrr dump --js)" = --json ] || fail "completion of 'clrr dump --js': $(comp clrr dump --js)"
all=$(comp clrr "")
for c in $cmds help; do [[ " $all " == *" $c "* ]] || fail "completion of 'clrr ' lacks $c: $all"; done
: >"$TMP/trace-for-completion.clrr"
[ "$(comp clrr info "$TMP/trace-for-")" = "$TMP/trace-for-completion.clrr" ] ||
    fail "completion of a file name: $(comp clrr info "$TMP/trace-for-")"
echo "ok: $(printf '%s\n' $cmds | wc -l) manual pages render and list their $n options; clrr.1, the completion"
