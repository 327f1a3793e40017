#!/usr/bin/env python3
"""check_optimize.py — om_optimize's output (`omopt run --save-optimized`) runs in ONNX Runtime.

For every model folder of ../shared/models and of the models folder beside it (/work/models:
model.onnx, in/NAME.npy, ref/N.npy): optimize it, run the result in ONNX Runtime (graph
optimizations off: the fused com.microsoft ops and the LayerNormalization of the ONNX domain
run as written), compare with the reference outputs (rtol 1e-4, atol 1e-5), require the graph
inputs and outputs unchanged and no more nodes than om_simplify leaves. Prints the main-graph
node counts: as loaded, simplify, optimize.

    check_optimize.py OMOPT [--shared DIR] [--only NAME,...]

Exit 0 when every check passes, 1 when one fails, 77 (skipped) when ../shared, Node.js,
onnxruntime-node (../shared/oracle/install.sh) or numpy/onnx are missing.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_simplify as cs  # noqa: E402 — io_signature, node_counts, ort_run, model_inputs


def check(name, d, omopt, oracle):
    import numpy as np
    tmp = tempfile.mkdtemp(prefix='omopt_checkopt_')
    try:
        src = os.path.join(d, 'model.onnx')
        simp, opt = os.path.join(tmp, 'simplified.onnx'), os.path.join(tmp, 'optimized.onnx')
        for args in (['simplify', src, simp], ['run', src, '--save-optimized', opt]):
            r = subprocess.run([omopt] + args, capture_output=True, text=True)
            if r.returncode:
                return {'model': name, 'error': f'{args[0]}: {r.stderr.strip()[-500:]}'}
        row = {'model': name, 'nodes': cs.node_counts(src)[0],
               'simplified': cs.node_counts(simp)[0], 'optimized': cs.node_counts(opt)[0]}
        outdir = os.path.join(tmp, 'out')
        cs.ort_run(oracle, opt, outdir, cs.model_inputs(d))
        bad = []
        for ref in sorted(glob.glob(os.path.join(d, 'ref', '*.npy'))):
            a, b = np.load(os.path.join(outdir, os.path.basename(ref))), np.load(ref)
            if a.shape != b.shape or a.dtype != b.dtype:
                bad.append(f'{os.path.basename(ref)}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}')
            elif not np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True):
                bad.append(f'{os.path.basename(ref)}: max abs diff '
                           f'{float(np.max(np.abs(a.astype(np.float64) - b))):.3g}')
        if cs.io_signature(src) != cs.io_signature(opt):
            bad.append(f'graph inputs/outputs changed: {cs.io_signature(src)} -> '
                       f'{cs.io_signature(opt)}')
        if row['optimized'] > row['simplified']:
            bad.append('more nodes than simplify leaves')
        if bad:
            row['error'] = '; '.join(bad)
        return row
    except Exception as e:  # noqa: BLE001 — reported as a failed row
        return {'model': name, 'error': str(e)[-800:]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('omopt')
    ap.add_argument('--shared', default=os.environ.get('OMOPT_SHARED'))
    ap.add_argument('--only', default='')
    a = ap.parse_args()
    missing = cs.oracle_missing(a.shared)
    if missing:
        print('skipped: ' + missing)
        return cs.SKIP
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        print(f'skipped: {sys.executable} cannot import {e.name} '
              '(apt-get install python3-numpy python3-onnx)')
        return cs.SKIP
    oracle = os.path.join(a.shared, 'oracle', 'ort_run.js')
    only = set(filter(None, a.only.split(',')))
    dirs = []
    for root in (os.path.join(a.shared, 'models'), os.path.join(a.shared, '..', 'models')):
        for d in sorted(glob.glob(os.path.join(root, '*', 'model.onnx'))):
            name = os.path.basename(os.path.dirname(d))
            if (not only or name in only) and name not in [n for n, _ in dirs]:
                dirs.append((name, os.path.dirname(d)))
    failed = 0
    print(f'{"model":<18} {"nodes":>6} {"simplify":>9} {"optimize":>9}')
    for name, d in dirs:
        row = check(name, d, os.path.abspath(a.omopt), oracle)
        if 'error' in row:
            failed += 1
            print(f'{name:<18} FAILED: {row["error"]}')
        else:
            print(f'{name:<18} {row["nodes"]:>6} {row["simplified"]:>9} {row["optimized"]:>9}')
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
