#!/usr/bin/python3
"""Same-run comparison of `omopt run` (fast mode, om_optimize on, as a user runs it) against
ONNX Runtime 1.30 at its default optimization level ('all'), both with the same thread count
(1 by default), on the same inputs (issue 13).

For each model and thread count, ROUNDS rounds alternate the two runtimes (omopt first in even
rounds, ONNX Runtime first in odd ones); a round is one process of each that times N runs after
one warm-up run (`omopt run --bench N`; bench/ort_cpu.js). Reported: the median over rounds of
each round's median wall time, the CPU time per run (user+sys of the process, which a loaded
machine inflates less than wall time), the spread of the round medians (max/min: how noisy the
machine was) and the ratios omopt / ONNX Runtime. Before timing, both run the model once and
the largest output difference is printed (relative to the output's largest magnitude, absolute
below 1; a fast path that breaks a model shows there).

With --base PATH, a second omopt build (e.g. main's) is timed in the same rounds: its median
and its ratio to ONNX Runtime's are printed too (before/after in one run).

usage: bench/compare_ort.py [--runs N] [--rounds R] [--threads 1,2] [--omopt PATH]
                            [--base PATH] [--no-check] [--markdown] [MODEL_DIR|NAME ...]
Without model arguments: every folder of ../shared/models and of the bench model cache
(bench/export_bench.py writes it: $OMOPT_BENCH_MODELS or ~/.cache/omopt-bench/models).
A model dir holds model.onnx and in/NAME.npy. Needs Node.js and the oracle
(../shared/oracle/install.sh; $OMOPT_SHARED names another shared folder, as for the tests) and
numpy. No test asserts a time: this prints numbers for bench/README.md.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared'))
ORACLE = os.path.join(SHARED, 'oracle', 'ort_run.js')


def cache_dir():
    return os.environ.get('OMOPT_BENCH_MODELS') or os.path.join(
        os.path.expanduser('~'), '.cache', 'omopt-bench', 'models')


def inputs(d):
    return sorted(glob.glob(os.path.join(d, 'in', '*.npy')))


def feeds(d):
    return [(os.path.basename(f)[:-4], f) for f in inputs(d)]


def omopt_cmd(a, d, threads, exe=None):
    cmd = [exe or a.omopt, 'run', os.path.join(d, 'model.onnx'), '--threads', str(threads)]
    for k, f in feeds(d):
        cmd += ['--input', '%s=%s' % (k, f)]
    # The environment is the user's, unchanged: libomopt does not link OpenBLAS when oneDNN is
    # in the build, and no OpenMP team forms in a run (omopt's own pool: docs/session.md), so no
    # library setting (OPENBLAS_NUM_THREADS, OMP_WAIT_POLICY) changes what is timed.
    env = dict(os.environ)
    return cmd, env


def omopt_time(a, d, threads, exe=None):
    cmd, env = omopt_cmd(a, d, threads, exe)
    p = subprocess.run(cmd + ['--bench', str(a.runs)], capture_output=True, text=True, env=env)
    m = re.search(r'median ([0-9.]+) ms.*cpu ([0-9.]+) ms', p.stdout + p.stderr)
    if p.returncode or not m:
        raise RuntimeError('omopt: ' + ((p.stderr.strip().splitlines() or ['?'])[-1]))
    return float(m.group(1)), float(m.group(2))


def last_line(text):
    return (text.strip().splitlines() or ['(nothing on stderr)'])[-1]


def missing_tools(a):
    """What the comparison needs and this machine lacks, as sentences."""
    out = []
    if not os.path.exists(ORACLE):
        out.append('the oracle (%s): ../shared next to the checkout (or $OMOPT_SHARED), set '
                   'up by its oracle/install.sh' % os.path.normpath(ORACLE))
    try:
        import numpy  # noqa: F401 (the output comparison's)
    except ImportError:
        out.append('numpy in %s (run the script as /usr/bin/python3 bench/compare_ort.py)'
                   % sys.executable)
    ort_dir = os.environ.get('OM_ORACLE_DIR') or os.path.join(
        os.path.expanduser('~'), '.cache', 'om-oracle')
    if not shutil.which('node'):
        out.append('Node.js (node, for ONNX Runtime)')
    elif not os.path.isdir(os.path.join(ort_dir, 'node_modules', 'onnxruntime-node')):
        out.append('onnxruntime-node in %s (OM_ORACLE_DIR): run sh %s' % (
            ort_dir, os.path.normpath(os.path.join(SHARED, 'oracle', 'install.sh'))))
    if not os.access(a.omopt, os.X_OK):
        out.append('the omopt executable %s (build it, or pass --omopt)' % a.omopt)
    return out


def ort_time(a, d, threads):
    cmd = ['node', os.path.join(HERE, 'ort_cpu.js'), os.path.join(d, 'model.onnx'),
           str(a.runs), '--level', 'all', '--threads', str(threads)]
    cmd += ['%s=%s' % kf for kf in feeds(d)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError('onnxruntime: ' + last_line(p.stderr))
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return r['run_ms_median'], r['cpu_ms_per_run']


def max_diff(a, d, threads):
    """largest |omopt - ONNX Runtime| over the outputs (relative to the reference's largest
    magnitude when that is above 1, else absolute), as a short string; outputs of different
    shapes say so. omopt runs on `threads` (its primitives are made for them), ONNX Runtime
    on one."""
    import numpy as np  # after the arguments: --help needs no numpy
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = os.path.join(tmp, 'omopt'), os.path.join(tmp, 'ort')
        cmd, env = omopt_cmd(a, d, threads)
        p = subprocess.run(cmd + ['--output-dir', ours, '--output-format', 'npy'],
                           capture_output=True, text=True, env=env)
        if p.returncode:
            return 'omopt failed: ' + last_line(p.stderr)
        q = subprocess.run(['node', ORACLE, os.path.join(d, 'model.onnx'), theirs, '--level',
                            'all'] + ['%s=%s' % kf for kf in feeds(d)],
                           capture_output=True, text=True)
        if q.returncode:
            return 'ort failed: ' + last_line(q.stderr)
        worst = 0.0
        for i, o in enumerate(json.load(open(os.path.join(theirs, 'outputs.json')))):
            ref = np.load(os.path.join(theirs, o['file']))
            got = np.load(os.path.join(ours, 'output_%d.npy' % i))
            if ref.shape != got.shape:
                return 'output %d: shape %s vs %s' % (i, got.shape, ref.shape)
            if ref.size == 0 or ref.dtype.kind not in 'fc':
                if ref.size and not np.array_equal(ref, got):
                    return 'output %d differs' % i
                continue
            scale = max(float(np.max(np.abs(ref))), 1.0)  # relative, absolute below 1
            worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - ref))) / scale)
        return '%.1e' % worst


def measure(a, d, threads):
    ours, theirs, base = [], [], []
    timers = [(ours, lambda: omopt_time(a, d, threads)), (theirs, lambda: ort_time(a, d, threads))]
    if a.base:
        timers.append((base, lambda: omopt_time(a, d, threads, a.base)))
    for r in range(a.rounds):
        for out, f in timers if r % 2 == 0 else timers[::-1]:
            out.append(f())
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    spread = lambda xs: max(x[0] for x in xs) / min(x[0] for x in xs)
    r = {'omopt_ms': med(ours, 0), 'omopt_cpu': med(ours, 1), 'ort_ms': med(theirs, 0),
         'ort_cpu': med(theirs, 1), 'spread': max(spread(ours), spread(theirs))}
    if base:
        r['base_ms'], r['base_cpu'] = med(base, 0), med(base, 1)
    return r


def model_dirs(a):
    if not a.models:
        found = sorted(glob.glob(os.path.join(SHARED, 'models', '*', 'model.onnx')))
        found += sorted(glob.glob(os.path.join(cache_dir(), '*', 'model.onnx')))
        return [os.path.dirname(f) for f in found]
    out = []
    for m in a.models:
        if os.path.isdir(m):
            out.append(m)
        else:
            for base in (os.path.join(SHARED, 'models'), cache_dir()):
                if os.path.isdir(os.path.join(base, m)):
                    out.append(os.path.join(base, m))
                    break
            else:
                raise SystemExit('%s: no such model folder (bench/export_bench.py %s?)' % (m, m))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\nusage:')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--runs', type=int, default=20, help='timed runs per process')
    ap.add_argument('--rounds', type=int, default=3, help='alternating processes per runtime')
    ap.add_argument('--threads', default='1', help='comma-separated thread counts')
    ap.add_argument('--omopt', default=os.path.join(HERE, '..', 'build', 'tools', 'omopt'))
    ap.add_argument('--base', help='a second omopt executable timed in the same rounds')
    ap.add_argument('--no-check', action='store_true', help='skip the output comparison')
    ap.add_argument('--markdown', action='store_true', help='print a bench/README.md table')
    ap.add_argument('models', nargs='*')
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(',')]
    missing = missing_tools(a)
    if missing:
        sys.exit('compare_ort.py: missing ' + '; '.join(missing))
    cols = ['model', 'threads', 'omopt ms', 'ORT ms', 'ratio', 'omopt cpu', 'ORT cpu',
            'cpu ratio', 'spread', 'max diff']
    if a.base:
        cols[2:2] = ['base ms', 'base ratio']
    if a.markdown:
        print('| ' + ' | '.join(cols) + ' |')
        print('|' + '---|' * len(cols))
    else:
        print(' '.join('%-30s' % c if i == 0 else '%9s' % c for i, c in enumerate(cols)))
    for d in model_dirs(a):
        name = os.path.basename(os.path.normpath(d))
        for t in threads:
            diff = '-' if a.no_check else max_diff(a, d, t)
            try:
                r = measure(a, d, t)
            except RuntimeError as e:
                print('%-30s %2d  %s' % (name, t, e))
                continue
            vals = [name, '%d' % t, '%.3g' % r['omopt_ms'], '%.3g' % r['ort_ms'],
                    '%.2f' % (r['omopt_ms'] / r['ort_ms']), '%.3g' % r['omopt_cpu'],
                    '%.3g' % r['ort_cpu'], '%.2f' % (r['omopt_cpu'] / r['ort_cpu']),
                    '%.2f' % r['spread'], diff]
            if a.base:
                vals[2:2] = ['%.3g' % r['base_ms'], '%.2f' % (r['base_ms'] / r['ort_ms'])]
            if a.markdown:
                print('| ' + ' | '.join(vals) + ' |')
            else:
                print(' '.join('%-30s' % v if i == 0 else '%9s' % v for i, v in enumerate(vals)))
            sys.stdout.flush()


if __name__ == '__main__':
    main()
