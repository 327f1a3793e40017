#!/usr/bin/env python3
"""roundtrip_ort.py — differential check of the ONNX writer with ONNX Runtime.

For every node-test case (model.onnx + test_data_set_0/input_N.pb) and every real model
(../shared/models/NAME: model.onnx + in/INPUT.npy) it runs ONNX Runtime
(../shared/oracle/ort_run.js) on the original model and on the model after an omopt
load → save round trip (every message rebuilt from the IR: `onnx_roundtrip --rebuild`), and
requires identical outputs. Cases ONNX Runtime refuses in their original form, or whose inputs
ort_run.js cannot feed (sequences, optionals, strings), are counted as skipped.
Not part of `meson test`: it needs Node.js and the oracle ($OMOPT_SHARED or ../shared).

usage: tests/roundtrip_ort.py [--build DIR] [--external] [--jobs N] [SUITE_DIR ...]
"""
import argparse
import concurrent.futures
import filecmp
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(ROOT, '..', 'shared'))
SUITES = ['/usr/share/libonnx-testdata/data/node',
          os.path.join(SHARED, 'conformance', 'onnx-node-1.23'),
          os.path.join(SHARED, 'models')]


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=300)


def ort(model, outdir, feeds):
    args = ['node', os.path.join(SHARED, 'oracle', 'ort_run.js'), model, outdir]
    return run(args + ['%s=%s' % kv for kv in feeds])


def same_outputs(a, b):
    names = sorted(f for f in os.listdir(a) if f.endswith('.npy') or f == 'outputs.json')
    if names != sorted(f for f in os.listdir(b) if f.endswith('.npy') or f == 'outputs.json'):
        return False
    return all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), shallow=False) for n in names)


def check(case, tool, extra):
    """Returns ('pass' | 'fail' | 'skip', reason)."""
    model = os.path.join(case, 'model.onnx')
    data = os.path.join(case, 'test_data_set_0')
    with tempfile.TemporaryDirectory(prefix='omrt_') as tmp:
        r = run([tool, 'inputs', model])
        if r.returncode:
            return 'fail', 'load: ' + r.stderr.strip()
        feeds = []
        for i, name in enumerate(r.stdout.split('\n')[:-1]):
            given = os.path.join(case, 'in', name + '.npy')
            if os.path.exists(given):
                feeds.append((name, given))
                continue
            pb = os.path.join(data, 'input_%d.pb' % i)
            npy = os.path.join(tmp, 'in%d.npy' % i)
            if not os.path.exists(pb) or run([tool, 'tensor', pb, npy]).returncode:
                return 'skip', 'input not a plain tensor'
            feeds.append((name, npy))
        o1, o2 = os.path.join(tmp, 'o1'), os.path.join(tmp, 'o2')
        os.mkdir(o1)
        os.mkdir(o2)
        if ort(model, o1, feeds).returncode:
            return 'skip', 'ONNX Runtime refuses the original'
        rt = os.path.join(tmp, 'rt.onnx')
        r = run([tool, 'model', model, rt, '--rebuild'] + extra)
        if r.returncode:
            return 'fail', 'round trip: ' + r.stderr.strip()
        h = r.stdout.split()
        if len(h) != 2 or h[0] != h[1]:
            return 'fail', 'IR dump changed by the round trip'
        r = ort(rt, o2, feeds)
        if r.returncode:
            return 'fail', 'ONNX Runtime refuses the round-tripped model: ' + \
                r.stderr.strip()[-300:]
        if not same_outputs(o1, o2):
            o3 = os.path.join(tmp, 'o3')
            os.mkdir(o3)
            if ort(model, o3, feeds).returncode or not same_outputs(o1, o3):
                return 'skip', 'ONNX Runtime is not deterministic on it (random ops)'
            return 'fail', 'outputs differ'
        return 'pass', ''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--external', action='store_true', help='write weights externally')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('suites', nargs='*')
    args = ap.parse_args()
    tool = os.path.join(args.build, 'tests', 'onnx_roundtrip')
    extra = ['--external'] if args.external else []
    cases = []
    for suite in args.suites or SUITES:
        if os.path.isdir(suite):
            cases += sorted(os.path.join(suite, d) for d in os.listdir(suite)
                            if os.path.exists(os.path.join(suite, d, 'model.onnx')))
    counts, skips, fails = {'pass': 0, 'fail': 0, 'skip': 0}, {}, []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for case, (verdict, why) in zip(cases, ex.map(lambda c: check(c, tool, extra), cases)):
            counts[verdict] += 1
            if verdict == 'skip':
                skips[why] = skips.get(why, 0) + 1
            elif verdict == 'fail':
                fails.append((case, why))
                print('FAIL %s: %s' % (case, why), flush=True)
    print('%d cases: %d pass, %d fail, %d skipped' %
          (len(cases), counts['pass'], counts['fail'], counts['skip']))
    for why, n in sorted(skips.items()):
        print('  skipped %d: %s' % (n, why))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
