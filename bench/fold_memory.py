#!/usr/bin/python3
"""Peak memory of `omopt simplify` when folding rewrites most weights (issue 37), beside ONNX
Runtime's basic optimizer + save on the same model in the same run.

The model: input x (N, H); K blocks of MatMul(x, Transpose(W_k)) -> Relu, each W_k (H, H) float
written by the onnx package (payloads at whatever offsets its writer gives, so most are copied
on load: docs/ir.md). Every Transpose folds, so every weight of the file is rewritten. With the
defaults (K 61, H 2048) the file is 1.02 GB. Peak memory is sampled from /proc/PID/status
every 5 ms: VmRSS, RssAnon, RssFile. The model is written once to --dir and reused.

usage: bench/fold_memory.py [--blocks K] [--hidden H] [--omopt PATH] [--dir DIR] [--no-ort]
No test asserts a time or a size: this prints numbers for notes.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(ROOT, '..', 'shared'))


def write_model(path, blocks, hidden):
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], 'x'
    for k in range(blocks):
        w = rng.standard_normal((hidden, hidden), dtype=np.float32) / np.sqrt(hidden)
        inits.append(numpy_helper.from_array(w.astype(np.float32), f'W{k}'))
        nodes += [helper.make_node('Transpose', [f'W{k}'], [f'Wt{k}'], perm=[1, 0]),
                  helper.make_node('MatMul', [x, f'Wt{k}'], [f'm{k}']),
                  helper.make_node('Relu', [f'm{k}'], [f'r{k}'])]
        x = f'r{k}'
    io = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, ['N', hidden])
    g = helper.make_graph(nodes, 'fold_memory', [io('x')], [io(x)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
    m.ir_version = 8
    onnx.save(m, path)


def peak(cmd):
    """Runs cmd; returns (returncode, wall seconds, {VmRSS, RssAnon, RssFile} peaks in MiB)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    top = {'VmRSS': 0, 'RssAnon': 0, 'RssFile': 0}
    t0 = time.time()
    while p.poll() is None:
        try:
            with open(f'/proc/{p.pid}/status') as f:
                for line in f:
                    key = line.split(':')[0]
                    if key in top:
                        top[key] = max(top[key], int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.005)
    wall = time.time() - t0
    err = p.stderr.read().decode(errors='replace')
    if p.returncode:
        print(err[-2000:], file=sys.stderr)
    return p.returncode, wall, {k: v / 1024 for k, v in top.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--blocks', type=int, default=61)
    ap.add_argument('--hidden', type=int, default=2048)
    ap.add_argument('--omopt', default=os.path.join(ROOT, 'build', 'tools', 'omopt'))
    ap.add_argument('--dir', default='/tmp/omopt_fold_memory')
    ap.add_argument('--no-ort', action='store_true')
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    model = os.path.join(a.dir, f'fold_{a.blocks}x{a.hidden}.onnx')
    if not os.path.exists(model):
        write_model(model, a.blocks, a.hidden)
    mib = os.path.getsize(model) / 2**20
    print(f'model: {model}, {mib:.0f} MiB, {a.blocks} foldable weight Transposes')
    print('| command | wall s | peak RSS MiB | / file | peak anon MiB | peak file MiB |')
    print('|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        runs = [('omopt simplify', [a.omopt, 'simplify', model, os.path.join(tmp, 's.onnx')])]
        oracle = os.path.join(SHARED, 'oracle', 'ort_run.js')
        if not a.no_ort and os.path.exists(oracle):
            x = os.path.join(tmp, 'x.npy')
            np.save(x, np.random.default_rng(1).standard_normal((1, a.hidden), np.float32))
            runs.append(('ONNX Runtime basic optimize + save (+1 run)',
                         ['node', oracle, model, os.path.join(tmp, 'ort'), f'x={x}',
                          '--save-optimized', os.path.join(tmp, 'o.onnx'), '--level', 'basic']))
        elif not a.no_ort:
            print(f'(ONNX Runtime skipped: {oracle} is missing)')
        for name, cmd in runs:
            rc, wall, top = peak(cmd)
            print(f'| {name} | {wall:.2f} | {top["VmRSS"]:.0f} | {top["VmRSS"] / mib:.2f} | '
                  f'{top["RssAnon"]:.0f} | {top["RssFile"]:.0f} |' + ('' if not rc else f' rc {rc}'))


if __name__ == '__main__':
    main()
