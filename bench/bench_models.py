#!/usr/bin/python3
"""Median latency of `omopt run` against ONNX Runtime (single-threaded, graph optimizations off
and at 'all'), measured in the same run on the same inputs, printed as ratios.

usage: bench/bench_models.py [--runs N] [--omopt PATH] [--exact] MODEL_DIR...
A model dir holds model.onnx and in/NAME.npy (the layout of ../shared/models and of
scripts/export_models.py). Needs the oracle (../shared/oracle/install.sh) and Node.js.
No test asserts a time: this prints numbers for the notes.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared'))


def inputs(d):
    return sorted(glob.glob(os.path.join(d, 'in', '*.npy')))


def omopt_ms(omopt, d, runs, exact):
    with tempfile.TemporaryDirectory() as out:
        cmd = [omopt, 'run', os.path.join(d, 'model.onnx'), '--output-dir', out,
               '--bench', str(runs), '--threads', '1']
        if exact:
            cmd.append('--exact')
        for f in inputs(d):
            cmd += ['--input', '%s=%s' % (os.path.basename(f)[:-4], f)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        m = re.search(r'median ([0-9.]+) ms', p.stdout + p.stderr)
        if p.returncode or not m:
            return None, (p.stderr.strip().splitlines() or ['?'])[-1]
        return float(m.group(1)), ''


def ort_ms(d, runs, level):
    with tempfile.TemporaryDirectory() as out:
        cmd = ['node', os.path.join(SHARED, 'oracle', 'ort_run.js'), os.path.join(d, 'model.onnx'),
               out, '--time', str(runs), '--threads', '1']
        if level:
            cmd += ['--save-optimized', os.path.join(out, 'opt.onnx'), '--level', level]
        cmd += ['%s=%s' % (os.path.basename(f)[:-4], f) for f in inputs(d)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            return None
        return json.loads(p.stdout.strip().splitlines()[-1])['run_ms_median']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=20)
    ap.add_argument('--omopt', default=os.path.join(HERE, '..', 'build', 'tools', 'omopt'))
    ap.add_argument('--exact', action='store_true')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    print('%-16s %12s %12s %12s %9s %9s' % ('model', 'omopt ms', 'ort ms', 'ort-all ms',
                                             'ratio', 'ratio-all'))
    for d in a.dirs:
        name = os.path.basename(os.path.normpath(d))
        ours, err = omopt_ms(a.omopt, d, a.runs, a.exact)
        plain, full = ort_ms(d, a.runs, None), ort_ms(d, a.runs, 'all')
        if ours is None:
            print('%-16s %12s  (%s)' % (name, 'error', err))
            continue
        fmt = lambda v: '%12.3f' % v if v else '%12s' % '-'
        rat = lambda v: '%9.2f' % (ours / v) if v else '%9s' % '-'
        print('%-16s %s %s %s %s %s' % (name, fmt(ours), fmt(plain), fmt(full), rat(plain),
                                        rat(full)))
        sys.stdout.flush()


if __name__ == '__main__':
    main()
