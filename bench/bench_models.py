#!/usr/bin/python3
"""Median latency of `omopt run` against ONNX Runtime (single-threaded, graph optimizations off
and at 'all'), measured in the same run on the same inputs, printed as ratios; wall time and
CPU time (user+sys per run: what counts on a loaded machine; ONNX Runtime's through ort_cpu.js).

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
        # OpenBLAS starts a thread per core at load time, which spin for a while: pin it to one
        # thread as --threads 1 asks, or their spinning counts in the CPU time
        env = dict(os.environ, OPENBLAS_NUM_THREADS='1')
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        m = re.search(r'median ([0-9.]+) ms.*cpu ([0-9.]+) ms', p.stdout + p.stderr)
        if p.returncode or not m:
            return None, None, (p.stderr.strip().splitlines() or ['?'])[-1]
        return float(m.group(1)), float(m.group(2)), ''


def ort_ms(d, runs, level):
    """(wall median ms, CPU ms per run) through bench/ort_cpu.js (process.cpuUsage)"""
    cmd = ['node', os.path.join(HERE, 'ort_cpu.js'), os.path.join(d, 'model.onnx'), str(runs)]
    if level:
        cmd += ['--level', level]
    cmd += ['%s=%s' % (os.path.basename(f)[:-4], f) for f in inputs(d)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return None, None
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return r['run_ms_median'], r['cpu_ms_per_run']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=20)
    ap.add_argument('--omopt', default=os.path.join(HERE, '..', 'build', 'tools', 'omopt'))
    ap.add_argument('--exact', action='store_true')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    print('%-14s %10s %10s %10s %7s %7s | %10s %10s %10s %7s %7s' % (
        'model', 'omopt ms', 'ort ms', 'ort-all', 'ratio', 'r-all',
        'omopt cpu', 'ort cpu', 'ort-all', 'ratio', 'r-all'))
    for d in a.dirs:
        name = os.path.basename(os.path.normpath(d))
        ours, ours_cpu, err = omopt_ms(a.omopt, d, a.runs, a.exact)
        (plain, plain_cpu), (full, full_cpu) = ort_ms(d, a.runs, None), ort_ms(d, a.runs, 'all')
        if ours is None:
            print('%-14s %10s  (%s)' % (name, 'error', err))
            continue
        fmt = lambda v: '%10.3f' % v if v else '%10s' % '-'
        rat = lambda x, v: '%7.2f' % (x / v) if v else '%7s' % '-'
        print('%-14s %s %s %s %s %s | %s %s %s %s %s' % (
            name, fmt(ours), fmt(plain), fmt(full), rat(ours, plain), rat(ours, full),
            fmt(ours_cpu), fmt(plain_cpu), fmt(full_cpu), rat(ours_cpu, plain_cpu),
            rat(ours_cpu, full_cpu)))
        sys.stdout.flush()


if __name__ == '__main__':
    main()
