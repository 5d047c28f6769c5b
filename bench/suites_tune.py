#!/usr/bin/python3
"""suites_tune.py — the tuner on third-party programs (`make bench-suites`).

    bench/suites_tune.py --clrr BUILD/bin/clrr [--list FILE] [--subset LIST]
        [--budget S] [--mode rapid|normal|exhaustive] [--reps N] [--live-reps N]
        [--record-device SPEC] [--deadline S] [--results FILE] [--table FILE]
    bench/suites_tune.py --from RESULTS [--table FILE]     (the table again)

For every program of tests/suites/apps.list (Debian clients, the public
suites tests/suites/fetch.sh builds; parsed, and run, as suite_run.py does):

 1. run it plainly (its own verdict: exit status and the CHECK column);
 2. record it (`clrr record`), replay the trace (`clrr replay --json`): a
    program that does not record the same verdict or whose trace does not
    replay verified is not tuned (the row says why);
 3. `clrr optimize --measure --tune[=MODE] --budget S --json TRACE -o PLAN`
    (every pass measured, work-group sizes tuned, the whole plan checked
    against no plan, the plan verified by optimize itself; --budget bounds
    all of optimize's measuring), bounded by --opt-timeout; its "tune:" and
    "verify:" lines (at most 40) go into the program's record as opt_log,
    and an empty plan's note says why, short ("0 of 12 launch shapes
    faster; dead not faster");
 4. `clrr replay --plan PLAN --json`: must verify (a plan that mismatches is
    a bug of the pass that made it: exit status 1);
 5. OpenCL time: REPS replays plain and REPS with the plan, alternated, the
    median of each replay's exec_ns (time inside OpenCL calls); every replay
    with the plan must verify;
 6. live (one process, one trace): one warm-up run with the plan, then
    LIVE_REPS runs of the plain command and LIVE_REPS of `clrr run --plan
    PLAN -- CMD`, alternated; whole-process wall time medians, and the
    program's own verdict under the plan every time.

A program whose plan is empty (optimize found or kept nothing) counts as
1.00x in both geomeans and is not timed (`clrr run --plan` runs it without
the layer). Exit status: 0; 1 when a written plan did not replay verified,
or the program's verdict under the plan failed; 77 when no program of the
list is installed.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'suites'))
import suite_run as S  # noqa: E402  (apps.list parsing, process-group timeouts, trace sets)

REPLAY_TIMEOUT = 600


def jrun(argv, cwd, env, timeout):
    rc, out, err = S.run(argv, cwd, env, timeout)
    try:
        j = json.loads(out)
    except ValueError:
        j = None
    return rc, j, err


def last_line(err):
    lines = [l for l in (err or '').strip().split('\n') if l.strip()]
    return lines[-1][:300] if lines else ''


def clean(cwd, keep=()):
    for f in os.listdir(cwd):
        if f in keep:
            continue
        p = os.path.join(cwd, f)
        shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)


def plan_kinds(path):
    """{pass: transformations} of a plan file; None when it cannot be read."""
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError):
        return None
    kinds = {}
    for x in p.get('transformations', []):
        k = x.get('pass') or x.get('action') or '?'
        kinds[k] = kinds.get(k, 0) + 1
    if p.get('staging'):   # plan 1.13: a measured staging decision (no transformation)
        kinds['stage'] = len(p['staging'])
    return kinds


def one(test, args, idx):
    r = {'name': test.name, 'stage': 'start'}
    tdir = os.path.join(args.work, 't%04d' % idx)
    cwd = os.path.join(tdir, 'run')
    os.makedirs(cwd, exist_ok=True)
    env = dict(os.environ, **test.env)
    outcome = S.apps_outcome_for(test)
    dev = ['--device', args.record_device] if args.record_device else []
    C = args.clrr
    argv = args.foreign + test.argv
    plain = argv
    if args.record_device:
        plain = [C, 'run', '--device', args.record_device, '--'] + argv
    t0 = time.time()
    # 1. plain (--no-plain: the recorded run's verdict alone)
    rc, out, err = S.run(plain, cwd, env, args.plain_timeout) if args.plain else (0, '', '')
    r['plain'], detail = outcome(rc, out, err, None) if args.plain else ('pass', '')
    r['plain_s'] = round(time.time() - t0, 2)
    if r['plain'] != 'pass':
        r.update(stage='native', reason='native: %s %s' % (r['plain'], detail))
        return r
    # 2. record, replay
    clean(cwd)
    trace = os.path.join(tdir, 'trace.clrr')
    rc, out, err = S.run([C, 'record', '--quiet', '--force'] + dev + ['-o', trace, '--'] + argv,
                         cwd, env, S.RECORD_TIMEOUT)
    v, detail = outcome(rc, out, err, None)
    traces = S.trace_set(trace)
    if v != 'pass':
        r.update(stage='record', reason='recorded: %s %s %s' % (v, detail, last_line(err)))
        return r
    if not traces:
        r.update(stage='record', reason='no trace (no OpenCL call recorded)')
        return r
    r['traces'] = len(traces)
    r['readbacks'] = 0
    for t in traces:
        rc, j, err = jrun([C, 'replay', '--json', t], cwd, env, REPLAY_TIMEOUT)
        r['readbacks'] += (j or {}).get('readbacks', 0)
        if rc != 0 or not j or not j.get('ok'):
            kn = args.known.get(test.name)
            r.update(stage='replay', reason='replay not verified (%s): %s' % (
                'exit %s' % rc, kn or last_line(err) or str((j or {}).get('mismatch_list', ''))[:200]))
            return r
    # 3. optimize, every trace of the set
    r.update(kinds={}, plans=0, empty=0, verified=0, opt_s=0.0, notes=[])
    plans = []
    for n, t in enumerate(traces):
        plan = os.path.join(tdir, 'p%d.plan' % n)
        t1 = time.time()
        rc, j, err = jrun([C, 'optimize'] + (['--measure'] if args.measure else []) +
                          (['--tune=' + args.mode] if args.tune else []) +
                          (['--budget', str(args.budget)] if args.tune or args.measure else []) +
                          (['--stage', args.stage] if args.stage and args.measure else []) +
                          ['--json', t, '-o', plan] + (['--device', args.record_device] if args.record_device else []),
                          cwd, env, args.opt_timeout)
        r['opt_s'] += round(time.time() - t1, 2)
        log = opt_log(err)
        r.setdefault('opt_log', []).extend(('%d: ' % n if len(traces) > 1 else '') + l for l in log)
        for l in (err or '').split('\n'):
            if 'removed' in l and 'verify' in l or 'left out' in l or 'mismatch' in l:
                r['notes'].append(l.replace('clrr optimize: ', '')[:200])
        if rc != 0 or not os.path.exists(plan):
            r.update(stage='optimize', reason='optimize: %s' % ('timed out after %d s' % args.opt_timeout
                                                                 if rc == 'timeout' else
                                                                 'exit %s: %s' % (rc, last_line(err))))
            return r
        r['plans'] += 1
        kinds = plan_kinds(plan) or {}
        for k, c in kinds.items():
            r['kinds'][k] = r['kinds'].get(k, 0) + c
        r['opt_verify'] = ((j or {}).get('verify') or {}).get('status', '?')
        if not kinds:
            r['empty'] += 1
            r.setdefault('empty_why', []).append(why_empty(log))
            continue
        # 4. the plan replays verified
        rc, j, err = jrun([C, 'replay', '--json', '--plan', plan, t], cwd, env, REPLAY_TIMEOUT)
        if rc == 0 and j and j.get('ok'):
            r['verified'] += 1
            plans.append((t, plan))
        else:
            r.setdefault('plan_fail', []).append('%s: exit %s, %s mismatches: %s %s' % (
                os.path.basename(t), rc, (j or {}).get('mismatches'), last_line(err),
                str((j or {}).get('mismatch_list', ''))[:300]))
    if r.get('plan_fail'):
        r.update(stage='plan', reason='PLAN DOES NOT REPLAY VERIFIED: ' + '; '.join(r['plan_fail']))
        return r
    r['stage'] = 'tuned'
    if not plans:
        why = '; '.join(w for w in dict.fromkeys(r.get('empty_why', [])) if w)
        r.update(speedup=1.0, reason='empty plan%s: counts as 1.00x' % (' (%s)' % why if why else ''))
        if args.live_reps:
            r['live'] = 'n/a (empty plan)'
        return r
    # 5. OpenCL time, replays alternated
    if args.reps:
        a, b = [], []
        for i in range(args.reps):
            sa = sb = 0
            for t, plan in plans:
                rc, j, err = jrun([C, 'replay', '--json', t], cwd, env, REPLAY_TIMEOUT)
                if rc != 0 or not j:
                    r.update(reason='a plain replay failed while timing: %s' % last_line(err))
                    return r
                sa += j['exec_ns']
                rc, j, err = jrun([C, 'replay', '--json', '--plan', plan, t], cwd, env, REPLAY_TIMEOUT)
                if rc != 0 or not j or not j.get('ok'):
                    r.update(stage='plan', reason='PLAN DOES NOT REPLAY VERIFIED (timing replay %d): exit %s %s' % (
                        i + 1, rc, last_line(err)))
                    return r
                sb += j['exec_ns']
            a.append(sa)
            b.append(sb)
        r['exec_plain_ms'] = round(statistics.median(a) / 1e6, 3)
        r['exec_plan_ms'] = round(statistics.median(b) / 1e6, 3)
        r['speedup'] = round(statistics.median(a) / max(statistics.median(b), 1), 3)
    # 6. live
    if args.live_reps and len(traces) > 1:
        r['live'] = 'n/a (%d processes)' % len(traces)
    elif args.live_reps:
        plan = plans[0][1]
        live = [C, 'run', '--plan', plan, '-q'] + dev + ['--'] + argv
        a, b, verdicts = [], [], []
        for i in range(args.live_reps + 1):
            for which in ((1,) if i == 0 else (0, 1)):   # run 0: the plan's warm-up (its kernels' builds)
                clean(cwd)
                t1 = time.time()
                rc, out, err = S.run(live if which else plain, cwd, env, args.plain_timeout * 2)
                dt = time.time() - t1
                v, detail = outcome(rc, out, err, None)
                if which:
                    verdicts.append(v)
                    if v != 'pass':
                        r.setdefault('live_fail', '%s %s %s' % (v, detail, last_line(err)))
                if i:
                    (b if which else a).append(dt)
        r['live'] = 'pass' if all(v == 'pass' for v in verdicts) else 'FAIL'
        r['live_n'] = len(verdicts)
        if a and b:
            r['wall_plain_s'] = round(statistics.median(a), 3)
            r['wall_plan_s'] = round(statistics.median(b), 3)
            r['wall_speedup'] = round(statistics.median(a) / max(statistics.median(b), 1e-6), 3)
        if r['live'] != 'pass':
            r['reason'] = 'VERDICT UNDER THE PLAN: ' + r.get('live_fail', '')
    if not args.keep:
        shutil.rmtree(tdir, ignore_errors=True)
    return r


OPT_LOG_MAX = 40


def opt_log(err):
    """optimize's "tune:" and "verify:" lines (at most OPT_LOG_MAX: the first and last halves)."""
    ls = [l.replace('clrr optimize: ', '')[:300] for l in (err or '').split('\n')
          if l.startswith('clrr optimize: tune:') or l.startswith('clrr optimize: verify:')]
    if len(ls) > OPT_LOG_MAX:
        h = OPT_LOG_MAX // 2
        ls = ls[:h] + ['... %d lines left out' % (len(ls) - 2 * h)] + ls[-h:]
    return ls


def why_empty(log):
    """Why a plan is empty, short, from optimize's lines (e.g. '0 of 12 launch shapes faster')."""
    out = []
    for l in log:
        m = re.match(r'tune: (\d+) launch shapes?, (\d+) measured, (\d+) tuned, .*?(\d+) out of budget', l)
        if m:
            out.append('%s of %s launch shapes faster%s' % (m.group(3), m.group(1), ', %s out of budget' % m.group(4)
                                                               if m.group(4) != '0' else ''))
            continue
        m = re.match(r'verify: pass (\w+) removed: measured', l)
        if m:
            out.append('%s not faster' % m.group(1))
            continue
        m = re.match(r'verify: not measured within --budget .*: pass(?:es)? (.*) removed', l)
        if m:
            out.append('%s not measured within --budget' % m.group(1))
            continue
        m = re.match(r'verify: not measured \((.*)\): pass(?:es)? (.*) removed', l)
        if m:
            out.append('%s not measured (%s)' % (m.group(2), m.group(1)[:60]))
            continue
        m = re.match(r'verify: final check: the whole plan \((.*?)\) (not faster|not measured within --budget|not measured)', l)
        if m and 'every transformation removed' in l:
            out.append('whole plan (%s) %s' % (m.group(1), m.group(2)))
            continue
        if l.startswith('verify: tuning not run'):
            out.append('tuning not run (--budget)')
        elif l.startswith('verify: live:') and 'every transformation removed' in l:
            out.append('gain below the layer\'s cost live')
        elif 'does not replay verified' in l or 'mismatched' in l and 'removed' in l:
            out.append(l.replace('verify: ', '')[:80])
    return '; '.join(out) or 'nothing found'


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def kinds_str(k):
    return ', '.join('%s %d' % (p, n) for p, n in sorted(k.items(), key=lambda x: -x[1])) if k else 'none'


def table(results, absent, header):
    rows = [header, '',
            '| program | transformations (by pass) | plan replays | OpenCL time plain / plan (ms) | OpenCL speedup |'
            ' process plain / plan (s) | process speedup | live verdict | note |',
            '|---|---|---|---:|---:|---:|---:|---|---|']
    for r in results:
        tuned = r['stage'] in ('tuned', 'plan')
        if not tuned:
            rows.append('| %s | not tuned | | | | | | | %s |' % (r['name'], r.get('reason', '').replace('|', '/')[:240]))
            continue
        if r.get('plans') and r.get('verified', 0) + r.get('empty', 0) == r['plans']:
            ver = 'empty' if r['verified'] == 0 else 'verified (%d of %d)' % (r['verified'], r['plans'] - r['empty'])
        else:
            ver = '**MISMATCH** (%d of %d)' % (r.get('verified', 0), r.get('plans', 0) - r.get('empty', 0))
        ex = '%.2f / %.2f' % (r['exec_plain_ms'], r['exec_plan_ms']) if 'exec_plain_ms' in r else ''
        sp = '%.2fx' % r['speedup'] if 'speedup' in r else ''
        wall = '%.2f / %.2f' % (r['wall_plain_s'], r['wall_plan_s']) if 'wall_plain_s' in r else ''
        wsp = '%.2fx' % r['wall_speedup'] if 'wall_speedup' in r else ('1.00x' if r.get('empty') and not r.get(
            'verified') else '')
        note = r.get('reason', '')
        if r.get('readbacks') == 0:
            note = 'no read-backs: nothing the program computes is observed, all of it is dead work; ' + note
        if not note and r.get('notes'):
            note = '; '.join(r['notes'])[:240]
        rows.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            r['name'], kinds_str(r.get('kinds')), ver, ex, sp, wall, wsp, r.get('live', ''),
            note.replace('|', '/').replace('\n', ' ')[:300]))
    rows.append('')
    rows += summary(results, absent)
    return '\n'.join(rows) + '\n'


def summary(results, absent):
    tuned = [r for r in results if r['stage'] in ('tuned', 'plan')]
    plans = sum(r.get('plans', 0) for r in tuned)
    empty = sum(r.get('empty', 0) for r in tuned)
    ver = sum(r.get('verified', 0) for r in tuned)
    bad = [r['name'] for r in tuned if r['stage'] == 'plan']
    why = ', '.join('%s: %d' % (s, n) for s, n in sorted(count(r['stage'] for r in results if r not in tuned).items()))
    out = ['%d programs: %d tuned (recorded and replayed verified), %d not%s%s.' % (
        len(results), len(tuned), len(results) - len(tuned), ' (stopped at %s)' % why if why else '',
        '; %d absent (not installed or fetched)' % len(absent) if absent else '')]
    out.append('Plans written: %d; empty: %d; non-empty: %d, of which replayed verified: %d%s.' % (
        plans, empty, plans - empty, ver, ' (**not verified: %s**)' % ', '.join(bad) if bad else ''))
    sp = [r['speedup'] for r in tuned if 'speedup' in r]
    spn = [r['speedup'] for r in tuned if 'speedup' in r and r.get('verified')]
    ne = sum(1 for r in tuned if r.get('empty') and not r.get('verified'))
    if spn:
        out.append('Geomean OpenCL-time speedup (replay with the plan against the plain replay, medians of '
                   'alternated replays): **%.3fx** over %d programs (the %d with an empty plan count as 1.00x); '
                   '%.3fx over the %d with a non-empty plan.' % (geomean(sp), len(sp), ne, geomean(spn), len(spn)))
        nr = [r for r in tuned if 'speedup' in r and r.get('readbacks') == 0]
        if nr:
            out.append('Without the %d programs that read nothing back (%s: the dead pass may drop all their work, '
                       'as nothing of it is observed): **%.3fx** over %d programs.' % (
                           len(nr), ', '.join(r['name'] for r in nr),
                           geomean([r['speedup'] for r in tuned if 'speedup' in r and r not in nr]), len(sp) - len(nr)))
    else:
        out.append('OpenCL time: not measured (--reps 0, or no non-empty plan).')
    wl = [r['wall_speedup'] for r in tuned if 'wall_speedup' in r]
    if wl:
        out.append('Geomean whole-process speedup (`clrr run --plan` against the plain program, medians of '
                   'alternated runs): **%.3fx** over %d programs (%d with a non-empty plan measured live; the %d '
                   'with an empty plan count as 1.00x); %.3fx over the %d measured.' % (
                       geomean(wl + [1.0] * ne), len(wl) + ne, len(wl), ne, geomean(wl), len(wl)))
        nr = [r for r in tuned if 'wall_speedup' in r and r.get('readbacks') == 0]
        if nr:
            out.append('Without the programs that read nothing back (%s): **%.3fx** over %d.' % (
                ', '.join(r['name'] for r in nr),
                geomean([r['wall_speedup'] for r in tuned if 'wall_speedup' in r and r not in nr] + [1.0] * ne),
                len(wl) + ne - len(nr)))
    else:
        out.append('Whole process: not measured (--live-reps 0, or no non-empty plan of one process).')
    slow = ['%s %.2fx' % (r['name'], r['speedup']) for r in tuned if r.get('speedup', 1) < 0.98]
    wslow = ['%s %.2fx' % (r['name'], r['wall_speedup']) for r in tuned if r.get('wall_speedup', 1) < 0.98]
    out.append('Slower than 0.98x, OpenCL time: %d%s; whole process: %d%s.' % (
        len(slow), ' (%s)' % ', '.join(slow) if slow else '', len(wslow), ' (%s)' % ', '.join(wslow) if wslow else ''))
    lf = [r['name'] for r in tuned if r.get('live') == 'FAIL']
    out.append('Live runs whose own verdict failed under the plan: %d%s.' % (len(lf), ' (%s)' % ', '.join(lf) if lf else ''))
    if absent:
        out.append('Absent: %s.' % '; '.join('%s (%s)' % a for a in absent))
    return out


def count(xs):
    c = {}
    for x in xs:
        c[x] = c.get(x, 0) + 1
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--clrr')
    ap.add_argument('--list', default=os.path.join(HERE, '..', 'tests', 'suites', 'apps.list'))
    ap.add_argument('--subset', help='only the programs named in this file (one per line)')
    ap.add_argument('--known', default=os.path.join(HERE, '..', 'tests', 'suites', 'apps.known'))
    ap.add_argument('--budget', type=float, default=10, help='clrr optimize --budget (default 10 s)')
    ap.add_argument('--no-plain', dest='plain', action='store_false',
                    help='do not run the program plainly first (its verdict recorded is still checked)')
    ap.add_argument('--no-measure', dest='measure', action='store_false',
                    help='clrr optimize without --measure (every pass as its rules decide)')
    ap.add_argument('--no-tune', dest='tune', action='store_false', help='clrr optimize without --tune')
    ap.add_argument('--mode', default='normal', choices=['rapid', 'normal', 'exhaustive'])
    ap.add_argument('--stage', choices=['auto', 'all', 'off'], help='clrr optimize --stage MODE (default: its own, auto with --measure)')
    ap.add_argument('--reps', type=int, default=5, help='alternated replays each, plain and with the plan (0: none)')
    ap.add_argument('--live-reps', type=int, default=5, help='alternated live runs each (0: none)')
    ap.add_argument('--record-device', help='as suite_run.py: record with --device SPEC, run with clrr run --device')
    ap.add_argument('--plain-timeout', type=int, default=S.PLAIN_TIMEOUT)
    ap.add_argument('--opt-timeout', type=int, default=600, help='per trace (default 600 s)')
    ap.add_argument('--deadline', type=float, default=0, help='start no program after S seconds (0: no limit)')
    ap.add_argument('--work')
    ap.add_argument('--costs', help='the cost database clrr reads and adds to (default: one of the run\'s own, '
                    'in --work, never this machine\'s: a run neither depends on earlier ones nor changes later ones)')
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--results', help='one JSON line per program')
    ap.add_argument('--from', dest='from_', nargs='+', metavar='RESULTS',
                    help='write the table from --results files (parts of one run, merged), run nothing')
    ap.add_argument('--table', help='the markdown table (default: stdout only)')
    ap.add_argument('--title', default='clrr optimize on third-party programs')
    ap.add_argument('--note', help='--from: a paragraph under the title (the command line, the machine)')
    ap.add_argument('-v', action='store_true')
    args = ap.parse_args()
    args.known = S.load_known(args.known)
    if args.from_:   # several files (parts of one run): a program's first row that got past 'not reached'
        results, absent, where = [], [], {}
        for fn in args.from_:
            with open(fn) as f:
                for line in f:
                    j = json.loads(line)
                    if 'absent' in j:
                        if tuple(j['absent']) not in absent:
                            absent.append(tuple(j['absent']))
                    elif j['name'] not in where:
                        where[j['name']] = len(results)
                        results.append(j)
                    elif results[where[j['name']]]['stage'] == 'not reached':
                        results[where[j['name']]] = j
        if args.subset:   # in the order of this list
            order = {n: i for i, n in enumerate(S.load_list(args.subset))}
            results.sort(key=lambda r: order.get(r['name'], len(order)))
        t = table(results, absent, '## ' + args.title + (('\n\n' + args.note) if args.note else ''))
        print(t)
        if args.table:
            open(args.table, 'w').write(t)
        return 0
    if not args.clrr:
        ap.error('--clrr is required')
    args.clrr = os.path.abspath(args.clrr)
    args.foreign = []
    if os.environ.get('CLRR_SAN') == '1':   # an ASan-built layer in programs we did not build: its runtime first
        rt = S.subprocess.run(['clang', '-print-file-name=libclang_rt.asan-x86_64.so'],
                              capture_output=True, text=True).stdout.strip()
        if not os.path.isfile(rt):
            print('skip: no shared ASan runtime for programs we did not build')
            return 77
        args.foreign = ['env', 'LD_PRELOAD=' + rt]
    tests, absent = S.apps_tests(args.list)
    if args.subset:
        want = S.load_list(args.subset)
        names = set(t.name for t in tests) | set(n for n, _ in absent)
        for w in want:
            if w not in names:
                print('FAIL: %s names %s, which %s does not have' % (args.subset, w, args.list))
                return 1
        byname = {t.name: t for t in tests}
        tests = [byname[w] for w in want if w in byname]   # in the subset's order
        absent = [a for a in absent if a[0] in want]
    for n, why in absent:
        print('absent: %s: %s' % (n, why), flush=True)
    if not tests:
        print('skip: none of the programs is installed (%s)' % '; '.join('%s: %s' % a for a in absent))
        return 77
    own = not args.work
    args.work = args.work or tempfile.mkdtemp(prefix='clrr-suites-tune.')
    os.makedirs(args.work, exist_ok=True)
    os.environ['CLRR_COSTS'] = os.path.abspath(args.costs) if args.costs else os.path.join(args.work, 'costs')
    res = open(args.results, 'w') if args.results else None
    if res:
        for a in absent:
            res.write(json.dumps({'absent': list(a)}) + '\n')
    start = time.time()
    results = []
    for i, t in enumerate(tests):
        if args.deadline and time.time() - start > args.deadline:
            r = {'name': t.name, 'stage': 'not reached', 'reason': 'not reached: --deadline %g s' % args.deadline}
        else:
            t1 = time.time()
            r = one(t, args, i)
            r['secs'] = round(time.time() - t1, 1)
        results.append(r)
        if res:
            res.write(json.dumps(r) + '\n')
            res.flush()
        if args.v:
            print('%-28s %-8s %s %s %s %s (%s s)' % (
                r['name'], r['stage'], kinds_str(r.get('kinds')) if 'kinds' in r else '',
                'x%.2f' % r['speedup'] if 'speedup' in r else '',
                'live x%.2f %s' % (r['wall_speedup'], r.get('live')) if 'wall_speedup' in r else r.get('live', ''),
                r.get('reason', ''), r.get('secs')), flush=True)
    if res:
        res.close()
    hdr = '## %s\n\n`clrr optimize%s%s`; %d alternated replays each; %d alternated live ' \
          'runs each (%.0f s in all)' % (args.title, ' --measure' if args.measure else '',
                                          ' --tune=%s --budget %g' % (args.mode, args.budget) if args.tune else '',
                                          args.reps, args.live_reps,
                                          time.time() - start)
    t = table(results, absent, hdr)
    print(t)
    if args.table:
        open(args.table, 'w').write(t)
    if own and not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    bad = [r['name'] for r in results if r['stage'] == 'plan' or r.get('live') == 'FAIL']
    if bad:
        print('FAIL: plans that do not replay verified, or verdicts that fail under the plan: %s' % ', '.join(bad))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
