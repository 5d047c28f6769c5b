#!/usr/bin/env bash
# tests/run.sh — runs test jobs in parallel and prints one closing line.
#
# Usage: run.sh [-j N] [-t LABEL] JOB...
#   JOB is BUILD_DIR:PATH[:san]
#     PATH ending in .sh: an end-to-end script, run as `bash PATH BUILD_DIR`
#       (with CLRR_SAN=1 when the job ends in :san); exit 0 pass, 77 skip,
#       anything else fails;
#     any other PATH: a test program (a CUnit binary, a fuzz corpus driver),
#       run as it is; exit 0 passes.
#   -j N   jobs at a time (default: CLRR_TEST_JOBS, else twice the online
#          CPUs: most jobs wait on child processes, PoCL's threads and the
#          disk rather than compute, so two per core keep the CPUs busy);
#   -t     the word before the closing line ("tests" by default).
# Jobs start longest first, by the durations in tests/durations.txt (seconds
# per job as "LABEL SECONDS" lines; jobs not listed start first, as if
# long); jobs listed in tests/serial.txt (timing-sensitive: they assert
# on clocks or kill at chosen moments) run after the others, one at a time.
# A job of a test named second on a line of tests/after.txt ("FIRST SECOND",
# each a script path or a test program's file name) starts only once the
# plain jobs of FIRST given in the same run have ended: the two build the
# same kernels, and started together both compile them cold.
# A sanitizer job (BUILD_DIR build-san, or :san) starts only once the same
# test of the plain flavour given in the same run has ended (its twin: the
# same script, or the test program of the same name): PoCL compiles each
# kernel once per shape into its cache (~/.cache/pocl), shared by both
# flavours, and twins started together both compile everything cold (on
# this 2-core VM test_rw_coarsen takes 88 s cold, 13 s warm).
# Each job's output is kept and printed only when it fails: its first
# lines that say fail or error (up to 10), then its last 40 lines.
# The closing line is "LABEL: N passed, N failed, N skipped"; exit 0
# when nothing failed. CLRR_TEST_DURATIONS=FILE writes the measured
# durations there (to refresh tests/durations.txt); CLRR_TEST_CPU=FILE
# writes each job's CPU seconds (user + system, all its processes) there.
set -u
here=$(cd "$(dirname "$0")" && pwd)
jobs=${CLRR_TEST_JOBS:-$(( $(nproc) * 2 ))}
word=tests
while getopts "j:t:" o; do
    case $o in
        j) jobs=$OPTARG;;
        t) word=$OPTARG;;
        *) echo "usage: run.sh [-j N] [-t LABEL] BUILD_DIR:PATH[:san]..." >&2; exit 2;;
    esac
done
shift $((OPTIND - 1))
[ "$jobs" -ge 1 ] 2>/dev/null || { echo "run.sh: -j wants a positive number, not '$jobs'" >&2; exit 2; }
[ $# -gt 0 ] || { echo "run.sh: no job given" >&2; exit 2; }

# a job's label: the path, with the flavour when it runs under sanitizers
label() { local b=${1%%:*} r=${1#*:}; local p=${r%%:*}; [ "$r" != "$p" ] && echo "$p [${r#*:} $b]" || echo "$p [$b]"; }

dur_of() {   # dur_of LABEL: the recorded seconds, or 100000 when unknown
    awk -v l="$1" 'BEGIN { d = 100000 } { s = $NF; $NF = ""; sub(/ $/, ""); if ($0 == l) d = s } END { print d }' \
        "$here/durations.txt" 2>/dev/null || echo 100000
}
is_serial() { local p=${1#*:}; grep -qxF "${p%%:*}" "$here/serial.txt" 2>/dev/null; }
# twin_key JOB: the test's name whatever the flavour (a script's path, a
# program's file name); is_san JOB: 0 when it is the sanitizer flavour
twin_key() { local r=${1#*:}; local p=${r%%:*}; [[ $p == *.sh ]] && echo "$p" || echo "${p##*/}"; }
is_san() { local b=${1%%:*} r=${1#*:}; [[ $b == *-san || $r == *:san ]]; }

# order: parallel jobs longest first, then the serial ones
par=(); ser=()
while read -r _ j; do par+=("$j"); done < <(for j in "$@"; do is_serial "$j" || echo "$(dur_of "$(label "$j")") $j"; done | sort -rn -s -k1,1)
for j in "$@"; do is_serial "$j" && ser+=("$j"); done

out=$(mktemp -d "${TMPDIR:-/tmp}/clrr-tests.XXXXXX")
trap 'rm -rf "$out"' EXIT
pass=0; fail=0; skip=0; failed=()
declare -A pid_job=() pid_start=() plain_left=()
n=0
# the plain jobs whose sanitizer twins wait for them (a count per name)
declare -a key_of=() san_of=()
for i in "${!par[@]}"; do
    key_of[$i]=$(twin_key "${par[$i]}"); san_of[$i]=0; is_san "${par[$i]}" && san_of[$i]=1
    [ "${san_of[$i]}" = 0 ] && plain_left[${key_of[$i]}]=$(( ${plain_left[${key_of[$i]}]:-0} + 1 ))
done

start_job() {   # start_job JOB INDEX
    local j=$1 i=$2 b=${1%%:*} r=${1#*:} p san=0
    p=${r%%:*}; [ "$r" != "$p" ] && [ "${r#*:}" = san ] && san=1
    (
        if [ -z "${CLRR_TEST_CPU:-}" ]; then
            if [[ $p == *.sh ]]; then CLRR_SAN=$san exec bash "$p" "$b"; else exec "$p"; fi
        fi
        if [[ $p == *.sh ]]; then CLRR_SAN=$san bash "$p" "$b"; else "$p"; fi
        rc=$?; times >"$out/$i.cpu"; exit $rc
    ) >"$out/$i.log" 2>&1 </dev/null &
    pid_job[$!]="$i $j"; pid_start[$!]=$(date +%s%N)
}

finish_job() {  # finish_job PID RC
    local pid=$1 rc=$2 i j l ms dt
    read -r i j <<<"${pid_job[$pid]}"
    if ! is_san "$j"; then local k; k=$(twin_key "$j"); plain_left[$k]=$(( ${plain_left[$k]:-1} - 1 )); fi
    ms=$(( ($(date +%s%N) - ${pid_start[$pid]}) / 1000000 )); dt="$((ms/1000)).$(( (ms%1000)/100 ))"
    l=$(label "$j")
    unset "pid_job[$pid]" "pid_start[$pid]"
    [ -n "${CLRR_TEST_DURATIONS:-}" ] && echo "$l $dt" >>"$CLRR_TEST_DURATIONS"
    # the job's CPU seconds (its processes' user + system time, every thread)
    [ -n "${CLRR_TEST_CPU:-}" ] && [ -s "$out/$i.cpu" ] &&
        awk -v l="$l" '{ s = 0; for (f = 1; f <= 2; f++) { split($f, a, /[ms]/); s += a[1] * 60 + a[2] }
                         printf "%s %.1f\n", l, s }' <(tail -1 "$out/$i.cpu") >>"$CLRR_TEST_CPU"
    case $rc in
        0) pass=$((pass+1)); echo "PASS $l (${dt}s)";;
        77) if [[ ${j#*:} == *.sh* ]]; then skip=$((skip+1)); echo "SKIP $l: $(tail -1 "$out/$i.log")";
            else fail=$((fail+1)); failed+=("$l"); echo "FAIL $l (rc=77)"; fi;;
        *) fail=$((fail+1)); failed+=("$l"); echo "FAIL $l (rc=$rc, ${dt}s)"
           if [ "$(wc -l <"$out/$i.log")" -gt 40 ]; then
               head -n -40 "$out/$i.log" | grep -m10 -iE 'fail|error' | sed 's/^/    | /'
           fi
           tail -40 "$out/$i.log" | sed 's/^/    /';;
    esac
}

# wait_one: waits for any running job and finishes it (bash 5.1's wait -p
# names the job that ended)
wait_one() {
    local pid rc
    wait -n -p pid "${!pid_job[@]}"; rc=$?
    finish_job "$pid" "$rc"
}

# the tests each test waits for (tests/after.txt), by key
declare -A after=()
while read -r a b _; do
    [ -n "${b:-}" ] && [[ $a != \#* ]] && after[$b]="${after[$b]:-} $a"
done < <(cat "$here/after.txt" 2>/dev/null)
# ready I: 0 when par[I] may start: a plain job whose firsts have ended,
# or a sanitizer job whose plain twin has ended
ready() {
    local a
    if [ "${san_of[$1]}" = 1 ]; then [ "${plain_left[${key_of[$1]}]:-0}" -le 0 ]; return; fi
    for a in ${after[${key_of[$1]}]:-}; do [ "${plain_left[$a]:-0}" -le 0 ] || return 1; done
}
left=${#par[@]}
declare -A started=()
while [ "$left" -gt 0 ]; do
    while [ "${#pid_job[@]}" -ge "$jobs" ]; do wait_one; done
    pick=-1
    for i in "${!par[@]}"; do
        [ -z "${started[$i]:-}" ] && ready "$i" && { pick=$i; break; }
    done
    if [ "$pick" -lt 0 ] && [ "${#pid_job[@]}" -eq 0 ]; then   # a cycle in after.txt: start one anyway
        for i in "${!par[@]}"; do [ -z "${started[$i]:-}" ] && { pick=$i; break; }; done
    fi
    if [ "$pick" -lt 0 ]; then wait_one; continue; fi
    started[$pick]=1; left=$((left-1))
    n=$((n+1)); start_job "${par[$pick]}" "$n"
done
while [ "${#pid_job[@]}" -gt 0 ]; do wait_one; done
for j in "${ser[@]}"; do
    n=$((n+1)); start_job "$j" "$n"
    wait_one
done
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "$word: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
