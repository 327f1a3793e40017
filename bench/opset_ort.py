#!/usr/bin/python3
"""opset_ort.py — `omopt simplify --opset N` on model folders, run in ONNX Runtime (the oracle).

usage: bench/opset_ort.py [--omopt build/tools/omopt] [--opsets 11,13,17,21] [MODEL_DIR...]

Each MODEL_DIR holds model.onnx, in/NAME.npy and ref/N.npy (ONNX Runtime's outputs of the
model as given, graph output order): ../shared/models/* by default. For each opset the model is
simplified and converted, the result's opset import read back, and ONNX Runtime's outputs of it
compared with ref (rtol 1e-4, atol 1e-5; integers and booleans exactly). Prints a table:
'ok' (ORT ran it, outputs match), 'refused: ...' (omopt refused the conversion, naming the
node), 'ORT failed' or 'mismatch' (both failures). Exit 1 on a failure, 0 otherwise (a refusal
is not a failure: omopt wrote nothing). Skips, saying so, when ../shared or the oracle is
missing.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def shared_dir():
    d = os.environ.get('OMOPT_SHARED') or os.path.join(ROOT, '..', 'shared')
    return d if os.path.isdir(d) else None


def run_case(omopt, oracle, model_dir, opset, tmp):
    out = os.path.join(tmp, 'm%d.onnx' % opset)
    p = subprocess.run([omopt, 'simplify', os.path.join(model_dir, 'model.onnx'), out,
                        '--opset', str(opset)], capture_output=True, text=True)
    if p.returncode:
        msg = (p.stderr.strip().splitlines() or ['?'])[-1]
        return 'refused', msg[:150]
    m = onnx.load(out)
    got = [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')]
    if got != [opset]:
        return 'fail', 'opset import %s' % got
    outdir = os.path.join(tmp, 'o%d' % opset)
    os.makedirs(outdir, exist_ok=True)
    args = ['node', oracle, out, outdir]
    for f in sorted(glob.glob(os.path.join(model_dir, 'in', '*.npy'))):
        args.append('%s=%s' % (os.path.basename(f)[:-4], f))
    env = dict(os.environ)
    env.setdefault('NODE_PATH', os.path.expanduser('~/.cache/om-oracle/node_modules'))
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    if p.returncode:
        return 'fail', 'ORT failed: ' + (p.stderr.strip().splitlines() or ['?'])[-1][:150]
    worst = 0.0
    for ref in sorted(glob.glob(os.path.join(model_dir, 'ref', '[0-9]*.npy'))):
        r = np.load(ref)
        g = np.load(os.path.join(outdir, os.path.basename(ref)))
        if r.shape != g.shape:
            return 'fail', 'mismatch: output %s shape %s vs %s' % (
                os.path.basename(ref), g.shape, r.shape)
        if r.dtype.kind in 'fc':
            if not np.allclose(g, r, rtol=1e-4, atol=1e-5, equal_nan=True):
                return 'fail', 'mismatch: output %s max |diff| %g' % (
                    os.path.basename(ref), float(np.max(np.abs(g.astype(np.float64) - r))))
            worst = max(worst, float(np.max(np.abs(g.astype(np.float64) - r), initial=0)))
        elif not np.array_equal(g, r):
            return 'fail', 'mismatch: output %s' % os.path.basename(ref)
    return 'ok', 'max |diff| %.2g' % worst


def main(argv):
    omopt = os.path.join(ROOT, 'build', 'tools', 'omopt')
    opsets = [11, 13, 17, 21]
    dirs = []
    i = 0
    while i < len(argv):
        if argv[i] == '--omopt':
            omopt = argv[i + 1]
            i += 2
        elif argv[i] == '--opsets':
            opsets = [int(x) for x in argv[i + 1].split(',')]
            i += 2
        else:
            dirs.append(argv[i])
            i += 1
    sh = shared_dir()
    if not dirs:
        if not sh:
            print('SKIP: ../shared (the shared models) is missing; set OMOPT_SHARED')
            return 77
        dirs = sorted(d for d in glob.glob(os.path.join(sh, 'models', '*'))
                      if os.path.isfile(os.path.join(d, 'model.onnx')))
    oracle = os.path.join(sh, 'oracle', 'ort_run.js') if sh else None
    nm = os.path.expanduser('~/.cache/om-oracle/node_modules/onnxruntime-node')
    if not oracle or not os.path.isfile(oracle) or not os.path.isdir(nm):
        print('SKIP: the oracle is missing (../shared/oracle/ort_run.js and '
              '~/.cache/om-oracle/node_modules/onnxruntime-node)')
        return 77
    failed = 0
    print('%-14s %5s  %-8s %s' % ('model', 'opset', 'result', 'detail'))
    with tempfile.TemporaryDirectory() as tmp:
        for d in dirs:
            src = [o.version for o in onnx.load(os.path.join(d, 'model.onnx'),
                                                  load_external_data=False).opset_import
                   if o.domain in ('', 'ai.onnx')]
            for o in opsets:
                res, detail = run_case(omopt, oracle, d, o, tmp)
                failed += res == 'fail'
                print('%-14s %2s->%-2d %-8s %s' % (os.path.basename(d), src[0] if src else '?',
                                                   o, res, detail), flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
