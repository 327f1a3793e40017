#!/usr/bin/env python3
"""check_simplify.py — `omopt simplify` on real models, checked with ONNX Runtime.

For every model folder (model.onnx, in/NAME.npy, optional ref/N.npy): simplify it, run the
result in ONNX Runtime (../shared/oracle/ort_run.js), compare with the reference outputs (rtol
1e-4, atol 1e-5; references are ONNX Runtime's outputs of the original, computed when ref/ is
missing) and require: the graph inputs and outputs unchanged (names, types, dims and symbols),
fewer nodes than the input (subgraphs included), a file no larger in bytes than the original,
and every QuantizeLinear/DequantizeLinear kept. Prints a table of node counts with subgraphs
next to ONNX Runtime's basic level (its optimized model saved and counted the same way), the
ratio omopt / ONNX Runtime, and the bytes before and after; on the ../shared models the
geometric mean of the ratios must be at most 0.8 and no ratio above 1.0.

    check_simplify.py OMOPT [--shared DIR] [--export DIR] [--only NAME,...] [--json FILE]
                            [--conformance RUNNER [--stride K]]

--export DIR also checks the models of scripts/export_models.py (torchvision resnet18,
mobilenet_v2, shufflenet_v2, a small ViT, transformer encoder and decoder, a seq2seq
transformer with float torch.arange positions, a QDQ-quantized convnet), exporting the ones
DIR does not hold yet (needs torch). --conformance RUNNER (tests/conformance) also simplifies
every K-th ONNX node-test model of ../shared/conformance and the Debian suite and requires the
runner to fail no case on the simplified models that it passes on the originals. Exit 0 when
every check passes, 1 when one fails, 77 (skipped) when ../shared, Node.js, onnxruntime-node
(../shared/oracle/install.sh) or numpy/onnx are missing.
"""
import argparse
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def node_counts(path):
    import onnx
    m = onnx.load(path, load_external_data=False)

    def total(g):
        n = 0
        for node in g.node:
            n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    n += total(a.g)
                for sg in a.graphs:
                    n += total(sg)
        return n
    return len(m.graph.node), total(m.graph)


def io_signature(path):
    """Names, element types and dims (numbers and symbols) of the graph inputs and outputs."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}

    def sig(v):
        t = v.type.tensor_type
        dims = tuple(d.dim_param if d.HasField('dim_param') else
                     d.dim_value if d.HasField('dim_value') else '?' for d in t.shape.dim)
        return (v.name, t.elem_type, dims if t.HasField('shape') else None)
    return ([sig(v) for v in m.graph.input if v.name not in inits],
            [sig(v) for v in m.graph.output])


def ort_run(oracle, model, outdir, inputs, extra=()):
    args = ['node', oracle, model, outdir] + [f'{k}={v}' for k, v in inputs] + list(extra)
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f'ONNX Runtime failed on {model}: {r.stderr.strip()[-800:]}')
    return r


def model_inputs(d):
    return sorted((os.path.splitext(os.path.basename(f))[0], f)
                  for f in glob.glob(os.path.join(d, 'in', '*.npy')))


QDQ_OPS = ('QuantizeLinear', 'DequantizeLinear', 'DynamicQuantizeLinear')


def qdq_counts(path):
    """How many nodes of each quantize/dequantize op (any domain), subgraphs included."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    counts = {}

    def walk(g):
        for node in g.node:
            if node.op_type in QDQ_OPS:
                key = (node.domain or 'ai.onnx') + ':' + node.op_type
                counts[key] = counts.get(key, 0) + 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(m.graph)
    return counts


def ort_basic_nodes(d, oracle, tmp):
    """Nodes (main graph, with subgraphs) of ONNX Runtime's basic-level optimized model."""
    opt = os.path.join(tmp, 'ort_basic.onnx')
    ort_run(oracle, os.path.join(d, 'model.onnx'), os.path.join(tmp, 'basic_out'),
            model_inputs(d), ['--save-optimized', opt, '--level', 'basic'])
    return node_counts(opt)


def references(d, oracle, tmp):
    """ref/N.npy of the folder, or ONNX Runtime's outputs of the original model."""
    refs = glob.glob(os.path.join(d, 'ref', '*.npy'))
    if not refs:
        ort_run(oracle, os.path.join(d, 'model.onnx'), os.path.join(tmp, 'ref'),
                model_inputs(d))
        refs = glob.glob(os.path.join(tmp, 'ref', '*.npy'))
    return sorted(refs, key=lambda p: int(os.path.splitext(os.path.basename(p))[0]))


def check(name, d, omopt, oracle):
    import numpy as np
    tmp = tempfile.mkdtemp(prefix='omopt_check_')
    try:
        src = os.path.join(d, 'model.onnx')
        dst = os.path.join(tmp, 'simplified.onnx')
        t0 = time.time()
        r = subprocess.run([omopt, 'simplify', src, dst, '--verify'], capture_output=True,
                           text=True)
        wall = time.time() - t0
        row = {'model': name, 'wall_s': round(wall, 3)}
        if r.returncode:
            row['error'] = f'simplify exit {r.returncode}: {r.stderr.strip()[-500:]}'
            return row
        row['nodes'], row['nodes_all'] = node_counts(src)
        row['simplified'], row['simplified_all'] = node_counts(dst)
        row['ort_basic'], row['ort_basic_all'] = ort_basic_nodes(d, oracle, tmp)
        row['ratio'] = round(row['simplified_all'] / max(row['ort_basic_all'], 1), 3)
        row['bytes'], row['simplified_bytes'] = os.path.getsize(src), os.path.getsize(dst)
        refs = references(d, oracle, tmp)
        outdir = os.path.join(tmp, 'out')
        ort_run(oracle, dst, outdir, model_inputs(d))
        bad = []
        for ref in refs:
            got = os.path.join(outdir, os.path.basename(ref))
            a, b = np.load(got), np.load(ref)
            if a.shape != b.shape or a.dtype != b.dtype:
                bad.append(f'{os.path.basename(ref)}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}')
            elif not np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True):
                bad.append(f'{os.path.basename(ref)}: max abs diff '
                           f'{float(np.max(np.abs(a.astype(np.float64) - b))):.3g}')
        row['outputs'] = len(refs)
        if io_signature(src) != io_signature(dst):
            bad.append(f'graph inputs/outputs changed: {io_signature(src)} -> '
                       f'{io_signature(dst)}')
        if row['simplified_bytes'] > row['bytes']:
            bad.append(f"larger: {row['bytes']} -> {row['simplified_bytes']} bytes")
        q0, q1 = qdq_counts(src), qdq_counts(dst)
        if q0 != q1:
            bad.append(f'quantize/dequantize nodes changed: {q0} -> {q1}')
        if not bad and row['simplified_all'] >= row['nodes_all']:
            bad.append('no fewer nodes')
        if bad:
            row['error'] = '; '.join(bad)
        return row
    except Exception as e:  # noqa: BLE001 — reported as a failed row
        row = {'model': name, 'error': str(e)[-800:]}
        return row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- exported models ---------------------------------------------------------------------

def export_models(outdir):
    """The model folders of scripts/export_models.py in outdir, exporting missing ones."""
    here = os.path.dirname(os.path.abspath(__file__))
    script = os.path.join(here, '..', 'scripts', 'export_models.py')
    r = subprocess.run([sys.executable, script, '--list'], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f'export_models.py --list failed: {r.stderr.strip()[-500:]}')
    names = r.stdout.split()
    missing = [n for n in names if not os.path.exists(os.path.join(outdir, n, 'model.onnx'))]
    if missing:
        subprocess.run([sys.executable, script, outdir] + missing, check=True)
    return [(n, os.path.join(outdir, n)) for n in names]


def conformance_check(omopt, runner, suites, stride):
    """Simplified node-test models must pass wherever the originals pass."""
    rows = []
    for suite in suites:
        cases = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(suite, '*',
                                                                         'model.onnx')))
        cases = cases[::stride]
        tmp = tempfile.mkdtemp(prefix='omopt_conf_')
        try:
            orig = os.path.join(tmp, 'orig')
            simp = os.path.join(tmp, 'simp')
            bad = []
            for c in cases:
                name = os.path.basename(c)
                os.makedirs(os.path.join(orig, name))
                os.makedirs(os.path.join(simp, name))
                os.symlink(os.path.join(c, 'model.onnx'), os.path.join(orig, name, 'model.onnx'))
                for t in glob.glob(os.path.join(c, 'test_data_set_*')):
                    for d in (orig, simp):
                        os.symlink(t, os.path.join(d, name, os.path.basename(t)))
                r = subprocess.run([omopt, 'simplify', os.path.join(c, 'model.onnx'),
                                    os.path.join(simp, name, 'model.onnx'), '--verify'],
                                   capture_output=True, text=True)
                if r.returncode:
                    bad.append(f'{name}: simplify exit {r.returncode}: {r.stderr.strip()[-200:]}')
                    shutil.copy(os.path.join(c, 'model.onnx'), os.path.join(simp, name))

            def failures(d):
                r = subprocess.run([runner, '-v', d], capture_output=True, text=True)
                return {line.split()[1] for line in r.stdout.splitlines() + r.stderr.splitlines()
                        if line.startswith('FAIL ')}
            new = failures(simp) - failures(orig)
            bad += [f'{n}: fails after simplify' for n in sorted(new)]
            row = {'model': f'conformance {os.path.basename(suite)} ({len(cases)})',
                   'outputs': len(cases)}
            if bad:
                row['error'] = '; '.join(bad[:10])
            rows.append(row)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def oracle_missing(shared):
    """What the comparisons with ONNX Runtime lack, said exactly; None when nothing."""
    ort_dir = os.environ.get('OM_ORACLE_DIR',
                             os.path.join(os.path.expanduser('~'), '.cache', 'om-oracle'))
    if not shared or not os.path.isdir(shared):
        return f'the workplace folder ../shared is not beside the clone ({shared})'
    if not os.path.isdir(os.path.join(shared, 'models')):
        return f'{os.path.join(shared, "models")} is missing'
    if not shutil.which('node'):
        return 'Node.js (node) is not on PATH (apt-get install nodejs)'
    if not os.path.exists(os.path.join(shared, 'oracle', 'ort_run.js')):
        return f'{os.path.join(shared, "oracle", "ort_run.js")} is missing'
    if not os.path.isdir(os.path.join(ort_dir, 'node_modules', 'onnxruntime-node')):
        return (f'ONNX Runtime for Node.js is not installed in {ort_dir} (OM_ORACLE_DIR, '
                f'default ~/.cache/om-oracle): sh {os.path.join(shared, "oracle", "install.sh")}')
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('omopt')
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument('--shared', default=os.environ.get('OMOPT_SHARED',
                                                       os.path.join(here, '..', '..', 'shared')))
    ap.add_argument('--export', help='folder of the models of scripts/export_models.py')
    ap.add_argument('--only', help='comma-separated model names')
    ap.add_argument('--json', help='write the rows here')
    ap.add_argument('--conformance', help='the conformance runner (tests/conformance)')
    ap.add_argument('--stride', type=int, default=1, help='every K-th node-test case')
    a = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        print(f'check_simplify: skipped: {sys.executable} cannot import {e.name} '
              '(apt-get install python3-numpy python3-onnx)')
        return SKIP
    oracle = os.path.join(a.shared, 'oracle', 'ort_run.js')
    missing = oracle_missing(a.shared)
    if missing:
        print('check_simplify: skipped: ' + missing)
        return SKIP
    cases = [(os.path.basename(d), d) for d in sorted(glob.glob(os.path.join(a.shared,
                                                                             'models', '*')))
             if os.path.exists(os.path.join(d, 'model.onnx'))]
    if a.export:
        cases += export_models(a.export)
    if a.only:
        keep = set(a.only.split(','))
        cases = [c for c in cases if c[0] in keep]
    rows = [check(name, d, os.path.abspath(a.omopt), oracle) for name, d in cases]
    for r, (name, d) in zip(rows, cases):
        r['shared'] = os.path.dirname(os.path.abspath(d)) == \
            os.path.abspath(os.path.join(a.shared, 'models'))
    if a.conformance:
        suites = [d for d in (os.path.join(a.shared, 'conformance', 'onnx-node-1.23'),
                              '/usr/share/libonnx-testdata/data/node') if os.path.isdir(d)]
        rows += conformance_check(os.path.abspath(a.omopt), os.path.abspath(a.conformance),
                                  suites, max(a.stride, 1))
    print(f"{'model':<18} {'nodes':>6} {'omopt':>6} {'ort basic':>9} {'ratio':>6} "
          f"{'bytes':>10} {'omopt bytes':>11} {'outputs':>7} {'time s':>7}  result")
    for r in rows:
        print(f"{r['model']:<18} {r.get('nodes_all', '-'):>6} {r.get('simplified_all', '-'):>6} "
              f"{r.get('ort_basic_all', '-'):>9} {r.get('ratio', '-'):>6} "
              f"{r.get('bytes', '-'):>10} {r.get('simplified_bytes', '-'):>11} "
              f"{r.get('outputs', '-'):>7} {r.get('wall_s', '-'):>7}  "
              f"{'FAIL: ' + r['error'] if 'error' in r else 'ok'}")
    print('(node counts include subgraphs; ratio = omopt / ONNX Runtime basic)')
    shared = [r for r in rows if r.get('shared') and 'ratio' in r]
    if shared:
        gm = math.exp(sum(math.log(r['ratio']) for r in shared) / len(shared))
        worst = max(shared, key=lambda r: r['ratio'])
        print(f"../shared models: geometric mean ratio {gm:.3f} (at most 0.8), highest "
              f"{worst['ratio']:.3f} ({worst['model']}, at most 1.0)")
        if gm > 0.8 or worst['ratio'] > 1.0:
            rows.append({'model': 'node count vs ONNX Runtime basic',
                         'error': f'geometric mean {gm:.3f}, highest {worst["ratio"]:.3f}'})
            print('FAIL: node count against ONNX Runtime basic')
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)
    return 1 if any('error' in r for r in rows) else 0


if __name__ == '__main__':
    sys.exit(main())
