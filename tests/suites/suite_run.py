#!/usr/bin/python3
"""suite_run.py — runs a third-party OpenCL test suite twice, once plainly
and once under `clrr record`, compares the outcome of every test, and
replays every trace with `clrr replay --json`.

    suite_run.py piglit|pyopencl --clrr BUILD/bin/clrr [--subset LIST]
                 [--known FILE] [--work DIR] [--results FILE] [-j N]

piglit:   the tests of piglit's `cl` profile (tests/cl.xml.gz of the installed
          piglit), run as piglit runs them: the test binary, or
          cl-program-tester FILE, with PIGLIT_SOURCE_DIR set; the outcome is
          read from the PIGLIT: lines and the exit status as piglit does.
pyopencl: pyopencl's own tests (the test_*.py files shipped in
          python-pyopencl-doc), one pytest run per node id, outcome from
          pytest's junit xml; PYOPENCL_NO_CACHE=1 so that every run makes the
          same OpenCL calls (builds included).

--subset LIST: only the tests named in LIST (one per line, # comments);
          piglit names as in piglit (api@clcreatebuffer); pyopencl node ids
          with the device part of the parameters written as CTX
          and of a platform as PLATFORM (test_array.py::test_stack[CTX-0]), or
          file::function for every parametrization.
--known FILE: tests whose trace is not expected to replay verified, one per
          line: NAME <TAB or 2+ spaces> reason. A replay of such a test that
          is not verified is listed with the reason, not as a failure; a
          known test whose replay is verified is listed as such, and passes.
          Outcomes (plain vs recorded) must be identical for every test.
--keep, --work DIR: keep every test's trace under DIR (t<N>/trace.clrr).
--results FILE: one JSON line per test (outcomes, replay summary, times).

Besides the outcome, the driver compares stdout (handle addresses,
pytest's timings and PoCL's temporary file names masked) and reports the tests whose stdout differs, and
the traces whose replay answered calls differently (call_diffs).

Exit status: 0 the outcomes are identical and every trace replays verified
(or is known); 1 otherwise; 77 the suite is not installed.
With CLRR_SAN=1 the programs we did not build get the ASan runtime
preloaded (the layer is ASan-built), plain runs included.
"""
import argparse
import atexit
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

PIGLIT_ROOT = '/usr/lib/x86_64-linux-gnu/piglit'
PYOPENCL_EXAMPLES = '/usr/share/doc/python-pyopencl-doc/examples'
PY = '/usr/bin/python3'
# piglit gives an OpenCL test 60 s; recording (and ASan) is slower.
PLAIN_TIMEOUT = 120
RECORD_TIMEOUT = 600
REPLAY_TIMEOUT = 600


def load_list(path):
    out = []
    if not path:
        return out
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                out.append(line)
    return out


def load_known(path):
    known = {}
    if not path or not os.path.exists(path):
        return known
    with open(path) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            parts = re.split(r'\t+| {2,}', line.strip(), maxsplit=1)
            known[parts[0]] = parts[1] if len(parts) > 1 else ''
    return known


class Test:
    def __init__(self, name, argv, cwd, env=None, node=None):
        self.name = name          # stable name (lists, reports)
        self.argv = argv          # the command (without the clrr prefix)
        self.cwd = cwd
        self.env = env or {}
        self.node = node          # pyopencl: the real node id


# ----------------------------------------------------------------- piglit
def piglit_tests():
    path = os.path.join(PIGLIT_ROOT, 'tests', 'cl.xml.gz')
    root = ET.fromstring(gzip.open(path).read())
    tests = []
    env = {'PIGLIT_SOURCE_DIR': PIGLIT_ROOT}
    for t in root.iter('Test'):
        opts = {o.get('name'): o.get('value') for o in t.iter('option')}
        kind, name = t.get('type'), t.get('name')
        if kind == 'cl':
            cmd = eval(opts['command'], {})          # a python list literal
            argv = [os.path.join(PIGLIT_ROOT, 'bin', cmd[0])] + cmd[1:]
        elif kind == 'cl_prog':
            fn = eval(opts['filename'], {})
            argv = [os.path.join(PIGLIT_ROOT, 'bin', 'cl-program-tester'),
                    os.path.join(PIGLIT_ROOT, fn)]
        else:
            continue
        tests.append(Test(name, argv, PIGLIT_ROOT, env))
    return tests


RANK = {'notrun': 0, 'skip': 0, 'pass': 1, 'warn': 2, 'fail': 4,
        'timeout': 5, 'crash': 6, 'incomplete': 7}


def piglit_outcome(rc, out, err, work):
    """piglit's interpretation (framework/test/piglit_test.py, base.py):
    the PIGLIT: lines give the result and subtests, a signal is a crash, a
    non-zero exit turns pass into warn and anything else into fail; the
    test's result is the worst subtest unless it crashed."""
    result, subtests = 'notrun', {}
    for line in out.split('\n'):
        if not line.startswith('PIGLIT:'):
            continue
        try:
            d = json.loads(line[8:])
        except ValueError:
            continue
        if 'enumerate subtests' in d:
            for n in d['enumerate subtests']:
                subtests[n] = 'notrun'
        if 'result' in d:
            result = d['result']
        if 'subtest' in d:
            subtests.update(d['subtest'])
    if rc == 'timeout':
        result = 'timeout'
    elif rc < 0:
        result = 'crash'
    elif rc != 0:
        result = 'warn' if result == 'pass' else 'fail'
    if result == 'skip' and subtests:
        subtests = {k: ('skip' if v == 'notrun' else v) for k, v in subtests.items()}
    overall = result
    if subtests and result != 'crash':
        overall = max(subtests.values(), key=lambda s: RANK.get(s, 3))
    detail = ' '.join('%s=%s' % (k, v) for k, v in sorted(subtests.items()))
    return overall, detail


# --------------------------------------------------------------- pyopencl
CTX_RE = re.compile(r"<context factory for <pyopencl\.Device '[^']*' on '[^']*'>>")
ADDR_RE = re.compile(r'0x[0-9a-f]{8,16}\b')   # printed handles (piglit's clgetdeviceinfo)
TIME_RE = re.compile(r'\bin [0-9.]+s\b')             # pytest's "1 passed in 0.52s"


TEMP_RE = re.compile(r'tempfile_\w+')                  # PoCL's build log names its temporary file


def mask(out):
    return TEMP_RE.sub('tempfile_X', TIME_RE.sub('in Ts', ADDR_RE.sub('0xADDR', out)))


PLAT_RE = re.compile(r"<pyopencl\.Platform '[^']*'>")


def pyopencl_dir(work):
    d = os.path.join(work, 'pyopencl-tests')
    if not os.path.isdir(d):
        os.makedirs(d)
        for f in os.listdir(PYOPENCL_EXAMPLES):
            if f.startswith('test_') and f.endswith('.py') or f.endswith(('.h', '.spv')):
                shutil.copy(os.path.join(PYOPENCL_EXAMPLES, f), d)
    return d


def pyopencl_env():
    return {'PYOPENCL_NO_CACHE': '1', 'PYOPENCL_COMPILER_OUTPUT': '0',
            'PYTHONDONTWRITEBYTECODE': '1'}


def pyopencl_tests(work, foreign):
    d = pyopencl_dir(work)
    files = sorted(f for f in os.listdir(d) if f.startswith('test_') and f.endswith('.py'))
    env = dict(os.environ, **pyopencl_env())
    p = subprocess.run(foreign + [PY, '-m', 'pytest', '-p', 'no:cacheprovider',
                                  '--collect-only', '-q'] + files,
                       cwd=d, env=env, capture_output=True, text=True)
    tests = []
    for line in p.stdout.split('\n'):
        if '::' not in line or line.startswith(' '):
            continue
        node = line.strip()
        name = PLAT_RE.sub('PLATFORM', CTX_RE.sub('CTX', node))
        argv = [PY, '-m', 'pytest', '-p', 'no:cacheprovider', '-q', '-x',
                '--junitxml=@JUNIT@', node]
        tests.append(Test(name, argv, d, pyopencl_env(), node))
    if not tests:
        sys.stderr.write('pytest collected nothing:\n' + p.stdout[-2000:] + p.stderr[-2000:])
    return tests


def pyopencl_outcome(rc, out, err, junit):
    if rc == 'timeout':
        return 'timeout', ''
    if rc < 0:
        return 'crash', 'signal %d' % -rc
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError):
        return 'crash', 'no junit xml, exit %d' % rc
    cases = list(root.iter('testcase'))
    if len(cases) != 1:
        return 'error', '%d test cases in junit xml, exit %d' % (len(cases), rc)
    c = cases[0]
    for tag, st in (('failure', 'fail'), ('error', 'error'), ('skipped', 'skip')):
        e = c.find(tag)
        if e is not None:
            msg = (e.get('message') or '').split('\n')[0][:100]
            if tag == 'skipped' and e.get('type') == 'pytest.xfail':
                st = 'xfail'
            return st, msg
    return 'pass', ''


# ------------------------------------------------------------------- apps
SUITES_DIR = os.environ.get('CLRR_SUITES') or os.path.expanduser('~/.cache/clrr/suites')
NUM_RE = re.compile(r'\b\d+\.\d+(e[-+]?\d+)?\b|\b\d+(\.\d+)? ?(ms|us|s|sec|GB/s|GFLOPS|MB/s)\b')


def apps_requirement(req):
    """None when REQ (deb:PKG, suite:NAME, py:MODULE) is met, else why not."""
    kind, _, what = req.partition(':')
    if kind == 'deb':
        p = subprocess.run(['dpkg-query', '-W', '-f', '${Status}', what],
                           capture_output=True, text=True)
        return None if 'install ok installed' in p.stdout else 'Debian package %s is not installed' % what
    if kind == 'suite':
        d = os.path.join(SUITES_DIR, what)
        if any(f.startswith('built.') for f in (os.listdir(d) if os.path.isdir(d) else [])):
            return None
        return '%s is not fetched and built (tests/suites/fetch.sh %s)' % (what, what)
    if kind == 'py':
        p = subprocess.run([PY, '-c', 'import ' + what], capture_output=True)
        return None if p.returncode == 0 else '%s has no module %s' % (PY, what)
    return 'unknown requirement ' + req


def apps_tests(listfile):
    tests, absent = [], []
    with open(listfile) as f:
        for line in f:
            if not line.strip() or line.startswith('#'):
                continue
            cols = line.rstrip('\n').split('\t')
            if len(cols) != 4:
                raise SystemExit('FAIL: %s: not 4 TAB-separated columns: %s' % (listfile, line.strip()))
            name, req, check, cmd = cols
            why = apps_requirement(req)
            if why:
                absent.append((name, why))
                continue
            env = {'SUITES': SUITES_DIR, 'PYEX': PYOPENCL_EXAMPLES, 'PYOPENCL_NO_CACHE': '1',
                   'PYOPENCL_COMPILER_OUTPUT': '0', 'PYOPENCL_CTX': '0', 'PYTHONDONTWRITEBYTECODE': '1'}
            t = Test(name, ['/bin/sh', '-c', cmd], None, env)
            t.check = check
            tests.append(t)
    return tests, absent


def apps_outcome_for(test):
    def outcome(rc, out, err, junit):
        if rc == 'timeout':
            return 'timeout', ''
        if rc != 0:
            return 'fail', 'exit %s' % rc
        c = test.check
        if c.startswith('!/') and re.search(c[2:-1], out, re.M):
            return 'fail', 'output matches %s' % c[1:]
        if c.startswith('/') and not re.search(c[1:-1], out, re.M):
            return 'fail', 'output lacks %s' % c
        return 'pass', ''
    return outcome


# ----------------------------------------------------------------- driver
def run(argv, cwd, env, timeout):
    """Runs ARGV in a session of its own; past TIMEOUT the whole process
    group is killed (a shell's children too), and 'timeout' is returned."""
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         errors='replace', start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
        return 'timeout', out or '', err or ''


def core_backtrace(cwd):
    """gdb's backtrace of the core file a crash left in CWD (the kernel's
    core_pattern 'core', the retry's `ulimit -c unlimited`), '' when there
    is none or no gdb; the core files are removed."""
    cores = [os.path.join(cwd, f) for f in os.listdir(cwd) if f == 'core' or re.fullmatch(r'core\.\d+', f)]
    bt = ''
    try:
        if cores and shutil.which('gdb'):
            info = subprocess.run(['gdb', '-batch', '-nx', '-c', cores[0]], capture_output=True, text=True,
                                  errors='replace', timeout=60).stdout
            m = re.search(r"Core was generated by `([^ '`]+)", info)
            exe = shutil.which(m.group(1)) if m else None
            out = subprocess.run(['gdb', '-batch', '-nx'] + ([exe] if exe else []) + ['-c', cores[0], '-ex', 'bt 30'],
                                 capture_output=True, text=True, errors='replace', timeout=120).stdout
            gen = [l for l in info.split('\n') if l.startswith('Core was generated') or l.startswith('Program terminated')]
            frames = [l for l in out.split('\n') if l.startswith('#')]
            frames = [l for i, l in enumerate(frames) if not i or l != frames[i - 1]]   # the frame gdb shows at load, then bt's
            bt = '\n'.join(gen + frames)
    except (OSError, subprocess.TimeoutExpired):
        pass
    for c in cores:
        try:
            os.unlink(c)
        except OSError:
            pass
    return bt


def trace_set(trace):
    """The traces one recording made: TRACE and TRACE's NAME.PID.clrr siblings."""
    base = trace[:-len('.clrr')]
    d = os.path.dirname(trace)
    sib = sorted(os.path.join(d, f) for f in os.listdir(d)
                 if re.fullmatch(re.escape(os.path.basename(base)) + r'\.\d+\.clrr', f))
    return ([trace] if os.path.exists(trace) else []) + sib


RANK_REPLAY = {'not run': 0, 'verified': 0, 'no read-backs': 1, 'nondeterministic': 2, 'mismatch': 3,
               'failed': 4, 'timeout': 5}


def replay_set(r, pre, traces, extra, cwd, env):
    """Replays every trace of a set with `clrr replay --json EXTRA`; sums the
    summaries into r (keys prefixed by PRE) and returns the worst verdict."""
    worst = 'verified'
    for k in ('calls', 'readbacks', 'mismatches', 'unverified', 'call_diffs'):
        r[pre + k] = 0
    for trace in traces:
        rc, out, err = run([ARGS.clrr, 'replay', '--json'] + extra + [trace], cwd, env, REPLAY_TIMEOUT)
        try:
            j = json.loads(out)
        except ValueError:
            j = {}
        for k in ('calls', 'readbacks', 'mismatches', 'unverified', 'call_diffs'):
            r[pre + k] += max(j.get(k, 0), 0)
        if rc == 'timeout':
            v = 'timeout'
        elif rc == 0 and j.get('ok'):
            v = 'verified' if j.get('readbacks', 0) > 0 else 'no read-backs'
        elif rc == 1:
            v = 'mismatch'
            # is the program itself nondeterministic? Three replays side by
            # side (clrr replay --repeat: exit 4 when they disagree among themselves)
            rrc, _, rerr = run([ARGS.clrr, 'replay', '--repeat', '3', '-q'] + extra + [trace], cwd, env,
                               REPLAY_TIMEOUT)
            if rrc == 4:
                v = 'nondeterministic'
                r.setdefault(pre + 'nondet', ((rerr or '').strip().split('\n') or [''])[0][:300])
        else:
            v = 'failed'
        if v not in ('verified', 'no read-backs') and pre + 'replay_err' not in r:
            r[pre + 'replay_err'] = ((err or '').strip().split('\n') or [''])[-1][:300]
            r[pre + 'mismatch_list'] = j.get('mismatch_list', [])[:5]
        r[pre + 'replay_rc'] = rc
        if RANK_REPLAY[v] > RANK_REPLAY[worst]:
            worst = v
    if worst == 'verified' and r[pre + 'readbacks'] == 0:
        worst = 'no read-backs'
    return worst


ARGS = None


def one(test, args, outcome, foreign, idx):
    """Runs one test plainly, then recorded, then replays the trace."""
    tdir = os.path.join(args.work, 't%04d' % idx)
    os.makedirs(tdir, exist_ok=True)
    env = dict(os.environ, **test.env)
    cwd = test.cwd or tdir
    if getattr(test, 'check', None) is not None:
        outcome = apps_outcome_for(test)
    r = {'name': test.name}
    t0 = time.time()
    # plain
    junit = os.path.join(tdir, 'junit.xml')
    argv = [a.replace('@JUNIT@', junit) for a in test.argv]
    plain = foreign + argv
    if args.record_device:   # the same device as recorded, presented first, nothing recorded
        plain = [args.clrr, 'run', '--device', args.record_device, '--'] + plain
    rc, out, err = run(plain, cwd, env, PLAIN_TIMEOUT)
    plain_out = out
    r['plain'], r['plain_detail'] = outcome(rc, out, err, junit)
    r['plain_rc'] = rc
    t1 = time.time()
    if rc == 'timeout' and getattr(test, 'check', None) is not None:
        # a program that does not end plainly is not recorded (it would not end either)
        r.update(rec='timeout', rec_detail=r['plain_detail'], rec_rc='not run', same_stdout=True,
                 replay='not run', traces=0, trace_bytes=0, overhead=0, secs=[round(t1 - t0, 2), 0, 0])
        return r
    # recorded
    trace = os.path.join(tdir, 'trace.clrr')
    os.path.exists(junit) and os.unlink(junit)   # the same path: pytest prints it
    argv = [a.replace('@JUNIT@', junit) for a in test.argv]
    for f in os.listdir(cwd) if test.cwd is None else []:   # what the plain run left
        if f not in ('junit.xml',):
            p = os.path.join(cwd, f)
            shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
    dev = ['--device', args.record_device] if args.record_device else []
    record = [args.clrr, 'record', '--quiet', '--force'] + dev + ['-o', trace, '--'] + foreign + argv

    def recorded(core=False):
        # core: the retry keeps a core file (core_backtrace), so that a crash
        # that comes back says where it was
        rc, out, err = run((['/bin/sh', '-c', 'ulimit -c unlimited 2>/dev/null; exec "$@"', 'sh'] if core else []) +
                           record, cwd, env, RECORD_TIMEOUT)
        if isinstance(rc, int) and 128 < rc < 128 + 65:
            rc = -(rc - 128)              # clrr record: 128+N = killed by signal N
        return rc, out, err, outcome(rc, out, err, junit)
    rc, out, err, (r['rec'], r['rec_detail']) = recorded()
    plain_signalled = r['plain'] == 'crash' or (isinstance(r['plain_rc'], int) and r['plain_rc'] < 0)
    if (r['rec'] == 'crash' or (isinstance(rc, int) and rc < 0)) and not plain_signalled:
        # a recording killed by a signal where the plain run was not: once
        # more recorded, the other side of the rule below (pyopencl's
        # test_copy_buffer_rect has crashed in PoCL, without clrr, in a
        # loaded make test); a crash that comes back counts, and one that
        # does not is listed with what the recorder said
        r['rec_crash_once'] = '%s: %s' % (r['rec_detail'] or r['rec'], (err or '').strip()[-300:])
        for t in trace_set(trace):
            os.unlink(t)
        for f in os.listdir(cwd) if test.cwd is None else []:
            p = os.path.join(cwd, f)
            shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        os.path.exists(junit) and os.unlink(junit)
        rc, out, err, (r['rec'], r['rec_detail']) = recorded(core=True)
        if r['rec'] == 'crash' or (isinstance(rc, int) and rc < 0):
            bt = core_backtrace(cwd)
            if bt:
                err = (err or '') + '\ncore backtrace:\n' + bt
        else:
            core_backtrace(cwd)   # (none expected: removed if any)
    m = (lambda o: NUM_RE.sub('N', mask(o))) if getattr(test, 'check', None) is not None else mask
    r['same_stdout'] = m(out) == m(plain_out)
    r['rec_rc'] = rc
    signalled = r['plain'] == 'crash' or (isinstance(r['plain_rc'], int) and r['plain_rc'] < 0)
    if signalled and (r['rec'], r['rec_detail']) != (r['plain'], r['plain_detail']):
        # a native crash with a recording that did not crash: once more plainly,
        # so that a crash of the program's own (the driver's, the test's) that
        # does not come back is said as such, not taken for clrr's doing
        for f in os.listdir(cwd) if test.cwd is None else []:
            if not f.endswith('.clrr'):
                p = os.path.join(cwd, f)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        junit2 = junit + '.again'
        argv2 = [a.replace('@JUNIT@', junit2) for a in test.argv]
        plain2 = plain[:len(plain) - len(argv)] + argv2
        rc2, out2, err2 = run(plain2, cwd, env, PLAIN_TIMEOUT)
        again = outcome(rc2, out2, err2, junit2)
        r['plain_crash_once'] = r['plain_detail']
        r['plain'], r['plain_detail'] = again
    if r['rec'] != r['plain'] or r['rec_detail'] != r['plain_detail']:
        r['rec_err'] = (err or '')[-3000:]
    t2 = time.time()
    # replay
    traces = trace_set(trace)
    r['traces'] = len(traces)
    r['trace_bytes'] = sum(os.path.getsize(t) for t in traces)
    r['replay'] = 'no trace' if not traces else replay_set(r, '', traces, [], cwd, env)
    t3 = time.time()
    if traces and args.cross:
        tol = ['--tolerance', args.cross_tolerance] if args.cross_tolerance else []
        r['cross'] = replay_set(r, 'cross_', traces, ['--device', args.cross] + tol, cwd, env)
    r['secs'] = [round(t1 - t0, 2), round(t2 - t1, 2), round(t3 - t2, 2)]
    plain_secs = t1 - t0
    if args.timing:   # once more plainly, after the caches (PoCL's, the program's) are warm
        for f in os.listdir(cwd) if test.cwd is None else []:
            if not f.endswith('.clrr'):
                p = os.path.join(cwd, f)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        t4 = time.time()
        run(plain, cwd, env, PLAIN_TIMEOUT)
        plain_secs = min(plain_secs, time.time() - t4)
    r['overhead'] = round((t2 - t1) / max(plain_secs, 1e-3), 2)
    if not args.keep:
        shutil.rmtree(tdir, ignore_errors=True)
    return r


def human(n):
    for u in ('B', 'KiB', 'MiB', 'GiB'):
        if n < 1024 or u == 'GiB':
            return ('%d %s' % (n, u)) if u == 'B' else ('%.1f %s' % (n, u))
        n /= 1024.0


def cross_reason(r, args):
    """One line: why the replay on --cross did not verify (the elements
    beyond the tolerance per read-back and the kernel that wrote them, or
    the replay's error)."""
    ml = r.get('cross_mismatch_list') or []
    if not ml:
        return r.get('cross_replay_err') or r.get('cross', '')
    parts = ['call %d: %d of %d elements%s' % (m.get('call', 0), m.get('differ', 0), m.get('elements', 0),
                                             ' (written by %s)' % m['written_by'] if m.get('written_by') else '')
             for m in ml[:2]]
    more = ' and %d more read-backs' % (len(ml) - 2) if len(ml) > 2 else ''
    return 'beyond %s: %s%s' % (args.cross_tolerance or 'exact', '; '.join(parts), more)


def apps_table(results, known, args):
    """One markdown row per program: native verdict, the same under clrr
    record (verdict, stdout), replay on the same device, on --cross, trace
    size and count, recording time over plain time, and the reason where
    something is not as it should be."""
    rows = ['| program | native | recorded | stdout | replay | %s | traces | size | record/plain | reason |' % (
        'replay on ' + args.cross if args.cross else 'other device'),
        '|---|---|---|---|---|---|---|---|---|---|']
    ran = ok = selfnd = 0
    for r in results:
        same = r['plain'] == r['rec'] and r['plain_detail'] == r['rec_detail']
        good = r['replay'] in ('verified', 'no read-backs', 'not run')
        native = r['plain'] == 'pass'
        if native:
            ran += 1
            ok += good and same
            selfnd += r['replay'] == 'nondeterministic' and same
        reason = ''
        if not same:
            reason = 'recorded: %s %s' % (r['rec'], r['rec_detail'])
        elif r['replay'] == 'nondeterministic':
            reason = known.get(r['name']) or 'the program itself: ' + r.get('nondet', '')
        elif not good:
            reason = known.get(r['name']) or r.get('replay_err') or str(r.get('mismatch_list', ''))[:200]
        elif not native:
            reason = 'native: %s' % r['plain_detail']
        elif r.get('cross') not in (None, 'verified', 'no read-backs', 'not run'):
            reason = 'on %s: %s' % (args.cross, cross_reason(r, args))
        rows.append('| %s | %s | %s | %s | %s | %s | %d | %s | %.2fx | %s |' % (
            r['name'], r['plain'], 'same' if same else r['rec'],
            'same' if r.get('same_stdout') else 'differs',
            '%s (%d of %d)' % (r['replay'], r.get('readbacks', 0) - r.get('mismatches', 0), r.get('readbacks', 0)),
            r.get('cross', 'n/a'), r.get('traces', 0), human(r.get('trace_bytes', 0)),
            r.get('overhead', 0), reason.replace('|', '/').replace('\n', ' ')[:240]))
    rows.append('')
    rows.append('%d of %d programs that run natively recorded the same verdict and replayed verified on the same device;'
                ' %d more are nondeterministic by themselves (`clrr replay --repeat 3`: their own replays disagree).'
                % (ok, ran, selfnd))
    return '\n'.join(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('suite', choices=['piglit', 'pyopencl', 'apps'])
    ap.add_argument('--list', help='apps: the program list (default tests/suites/apps.list)')
    ap.add_argument('--record-device', help='record with clrr record --device SPEC, and run plainly with '
                    'clrr run --device SPEC (the device presented first, nothing recorded)')
    ap.add_argument('--cross', help='also replay every trace on this device (--device SPEC)')
    ap.add_argument('--cross-tolerance', default='rel=1e-4',
                    help='the tolerance of the --cross replays (default rel=1e-4)')
    ap.add_argument('--timing', action='store_true',
                    help='run each test plainly once more after recording: the record/plain ratio is taken against the faster plain run')
    ap.add_argument('--table', help='write the per-program table (markdown) to FILE')
    ap.add_argument('--clrr', required=True)
    ap.add_argument('--subset')
    ap.add_argument('--known')
    ap.add_argument('--work')
    ap.add_argument('--results')
    ap.add_argument('--keep', action='store_true', help='keep every trace')
    ap.add_argument('-j', type=int, default=1)
    ap.add_argument('-v', action='store_true', help='one line per test')
    args = ap.parse_args()
    args.clrr = os.path.abspath(args.clrr)
    global ARGS
    ARGS = args

    foreign = []
    if os.environ.get('CLRR_SAN') == '1':
        rt = subprocess.run(['clang', '-print-file-name=libclang_rt.asan-x86_64.so'],
                            capture_output=True, text=True).stdout.strip()
        if not os.path.isfile(rt):
            print('skip: no shared ASan runtime for programs we did not build')
            return 77
        foreign = ['env', 'LD_PRELOAD=' + rt]

    absent_names = set()
    own_work = not args.work
    args.work = args.work or tempfile.mkdtemp(prefix='clrr-suite.')
    os.makedirs(args.work, exist_ok=True)
    if own_work and not args.keep:   # on every return
        atexit.register(shutil.rmtree, args.work, True)
    start = time.time()
    if args.suite == 'piglit':
        if not os.path.exists(os.path.join(PIGLIT_ROOT, 'tests', 'cl.xml.gz')):
            print('skip: piglit is not installed')
            return 77
        tests, outcome = piglit_tests(), piglit_outcome
    elif args.suite == 'apps':
        lst = args.list or os.path.join(os.path.dirname(os.path.abspath(__file__)), 'apps.list')
        tests, absent = apps_tests(lst)
        absent_names = set(n for n, _ in absent)
        outcome = None
        for name, why in absent:
            print('absent: %s: %s' % (name, why))
        if not tests:
            print('skip: none of the programs of %s is installed' % lst)
            return 77
    else:
        if subprocess.run([PY, '-c', 'import pyopencl, pytest, numpy'],
                          capture_output=True).returncode != 0:
            print('skip: %s has no pyopencl, pytest or numpy' % PY)
            return 77
        if not os.path.isdir(PYOPENCL_EXAMPLES):
            print('skip: python-pyopencl-doc (pyopencl\'s tests) is not installed')
            return 77
        tests, outcome = pyopencl_tests(args.work, foreign), pyopencl_outcome
        if not tests:
            print('FAIL: pytest collected no pyopencl tests')
            return 1

    if args.subset:
        wanted = load_list(args.subset)
        chosen, seen = [], set()
        for w in wanted:
            hits = [t for t in tests if t.name == w or
                    (args.suite == 'pyopencl' and '[' not in w and t.name.split('[')[0] == w)]
            if not hits and w in absent_names:
                continue
            if not hits:
                print('FAIL: %s names %s, which the suite does not have' % (args.subset, w))
                return 1
            for t in hits:
                if t.name not in seen:
                    seen.add(t.name)
                    chosen.append(t)
        tests = chosen
        if not tests:
            print('skip: none of the programs of %s is installed' % args.subset)
            return 77
    known = load_known(args.known)

    results = []
    out = open(args.results, 'w') if args.results else None
    with ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        futs = [ex.submit(one, t, args, outcome, foreign, i) for i, t in enumerate(tests)]
        for f in futs:
            r = f.result()
            results.append(r)
            if out:
                out.write(json.dumps(r) + '\n')
                out.flush()
            if args.v:
                print('%-70s plain=%-5s rec=%-5s replay=%s %s' % (
                    r['name'][:70], r['plain'], r['rec'], r['replay'], r['secs']), flush=True)
    wall = time.time() - start
    if out:
        out.close()

    def count(key):
        c = {}
        for r in results:
            c[r[key]] = c.get(r[key], 0) + 1
        return ', '.join('%d %s' % (n, k) for k, n in sorted(c.items(), key=lambda x: -x[1]))

    problems = []
    differ = [r for r in results if r['plain'] != r['rec'] or r['plain_detail'] != r['rec_detail']]
    for r in differ:
        problems.append('%s: plain %s (%s), recorded %s (%s)%s' % (
            r['name'], r['plain'], r['plain_detail'][:200], r['rec'], r['rec_detail'][:200],
            ('\n      recorder stderr: ' + r.get('rec_err', '')[-(2400 if 'core backtrace:' in r.get('rec_err', '') else 400):]
             .replace('\n', '\n      '))
            if r.get('rec_err') else ''))
    nondet, stale, selfnd = [], [], []
    for r in results:
        ok = r['replay'] in ('verified', 'no read-backs', 'not run')
        if r['replay'] == 'nondeterministic' and r['name'] not in known:
            selfnd.append(r)   # the program's own replays disagree: not clrr's fault, listed below
            continue
        if r['name'] in known:
            if ok:
                stale.append(r['name'])
            else:
                nondet.append(r)
                continue
        if not ok:
            problems.append('%s: replay %s (readbacks %s, mismatches %s, call_diffs %s): %s %s' % (
                r['name'], r['replay'], r.get('readbacks'), r.get('mismatches'),
                r.get('call_diffs'), r.get('replay_err', ''), r.get('mismatch_list', '')))

    n = len(results)
    print('%s: %d tests in %.0f s%s' % (args.suite, n, wall, ' (subset %s)' % os.path.basename(args.subset) if args.subset else ''))
    print('  plain:    %s' % count('plain'))
    print('  recorded: %s' % count('rec'))
    print('  outcomes identical: %d of %d' % (n - len(differ), n))
    once = [r for r in results if r.get('plain_crash_once')]
    if once:   # the program's own, not clrr's: its second plain run did not crash
        print('  plain runs that crashed once, not again (the program itself): %s' % ', '.join(
            '%s (%s; then %s)' % (r['name'], r['plain_crash_once'], r['plain']) for r in once))
    once = [r for r in results if r.get('rec_crash_once')]
    if once:   # killed once recorded, not again: said, not counted
        print('  recorded runs that crashed once, not again: %s' % ', '.join(
            '%s (%s; then %s)' % (r['name'], r['rec_crash_once'], r['rec']) for r in once))
    print('  stdout identical (addresses, times, temporary file names masked): %d of %d%s' % (
        sum(1 for r in results if r.get('same_stdout')), n,
        ' (not: %s)' % ', '.join(r['name'] for r in results if not r.get('same_stdout'))[:2000]
        if any(not r.get('same_stdout') for r in results) else ''))
    print('  replays:  %s' % count('replay'))
    rb = sum(max(r.get('readbacks', 0), 0) for r in results)
    print('  read-backs verified: %d in %d traces' % (
        sum(max(r.get('readbacks', 0), 0) - max(r.get('mismatches', 0), 0) for r in results),
        sum(1 for r in results if r['replay'] == 'verified')) + ' (%d read-backs in all)' % rb)
    unv = [r for r in results if r.get('unverified', 0) > 0]
    if unv:
        print('  read-backs not verified (the command failed or its data was not captured): %s' % ', '.join(
            '%s (%d)' % (r['name'], r['unverified']) for r in unv))
    diffs = [r for r in results if r.get('call_diffs', 0) > 0]
    if diffs:
        print('  traces with calls answered differently (tolerated): %s' % ', '.join(
            '%s (%d)' % (r['name'], r['call_diffs']) for r in diffs))
    if nondet:
        print('  known issues (tests/suites/*.known), replay not verified as expected: %d' % len(nondet))
        for r in nondet:
            print('    %s: replay %s: %s' % (r['name'], r['replay'], known[r['name']]))
    if stale:
        print('  listed as nondeterministic but replayed verified: %s' % ', '.join(stale))
    if selfnd:
        print('  nondeterministic by themselves (clrr replay --repeat 3: their replays disagree among themselves): %s'
              % ', '.join(r['name'] for r in selfnd))
    if args.suite == 'apps' or args.table:
        table = apps_table(results, known, args)
        if args.suite == 'apps':
            print(table)
        if args.table:
            with open(args.table, 'w') as f:
                f.write(table + '\n')
    if problems:
        print('PROBLEMS (%d):' % len(problems))
        for p in problems:
            print('  ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
