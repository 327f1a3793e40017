#!/usr/bin/env python3
"""check_simplify.py — `omopt simplify` on real models, checked with ONNX Runtime.

For every model folder (model.onnx, in/NAME.npy, ref/N.npy, optional ort.json): simplify it,
run the result in ONNX Runtime (../shared/oracle/ort_run.js), compare with the reference
outputs (rtol 1e-4, atol 1e-5), require the graph inputs and outputs unchanged and fewer
nodes than the input (subgraphs included). Prints a table with the main-graph node counts next
to ONNX Runtime's basic optimizer, and the counts with subgraphs.

    check_simplify.py OMOPT [--shared DIR] [--export DIR] [--only NAME,...]
                            [--conformance RUNNER [--stride K]]

--export DIR also exports (once, cached in DIR) torchvision resnet18, mobilenet_v2 and
shufflenet_v2_x0_5 with a dynamic batch and a small transformer with dynamic batch and
sequence, with inputs and ONNX Runtime references. --conformance RUNNER (tests/conformance)
also simplifies every K-th ONNX node-test model of ../shared/conformance and the Debian suite
and requires the runner to fail no case on the simplified models that it passes on the
originals. Exit 0 when every check passes, 1 when
one fails, 77 (skipped) when ../shared, Node.js, onnxruntime-node (../shared/oracle/install.sh)
or numpy/onnx are missing.
"""
import argparse
import glob
import json
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


def ort_basic_nodes(d, oracle, tmp):
    j = os.path.join(d, 'ort.json')
    if os.path.exists(j):
        with open(j) as f:
            v = json.load(f).get('ort_basic_nodes')
        if v is not None:
            return v
    opt = os.path.join(tmp, 'ort_basic.onnx')
    ort_run(oracle, os.path.join(d, 'model.onnx'), os.path.join(tmp, 'basic_out'),
            model_inputs(d), ['--save-optimized', opt, '--level', 'basic'])
    return node_counts(opt)[0]


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
        row['ort_basic'] = ort_basic_nodes(d, oracle, tmp)
        outdir = os.path.join(tmp, 'out')
        ort_run(oracle, dst, outdir, model_inputs(d))
        refs = sorted(glob.glob(os.path.join(d, 'ref', '*.npy')),
                      key=lambda p: int(os.path.splitext(os.path.basename(p))[0]))
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
        if bad:
            row['error'] = 'outputs differ: ' + '; '.join(bad)
        elif row['simplified_all'] >= row['nodes_all']:
            row['error'] = 'no fewer nodes'
        return row
    except Exception as e:  # noqa: BLE001 — reported as a failed row
        row = {'model': name, 'error': str(e)[-800:]}
        return row
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- exported models ---------------------------------------------------------------------

def export_models(outdir, oracle):
    import numpy as np
    import torch
    import torchvision
    torch.manual_seed(0)
    made = []

    class Block(torch.nn.Module):
        def __init__(self, d=64, h=4):
            super().__init__()
            self.h = h
            self.qkv = torch.nn.Linear(d, 3 * d)
            self.proj = torch.nn.Linear(d, d)
            self.ln1 = torch.nn.LayerNorm(d)
            self.ln2 = torch.nn.LayerNorm(d)
            self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                           torch.nn.Linear(4 * d, d))

        def forward(self, x):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q = q.reshape(b, s, self.h, d // self.h).transpose(1, 2)
            k = k.reshape(b, s, self.h, d // self.h).transpose(1, 2)
            v = v.reshape(b, s, self.h, d // self.h).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.h) ** 0.5, dim=-1)
            y = (a @ v).transpose(1, 2).reshape(b, s, d)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class Transformer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.Sequential(Block(), Block())
            self.head = torch.nn.Linear(64, 10)

        def forward(self, x):
            return self.head(self.blocks(x)).flatten(1)

    specs = [
        ('resnet18', lambda: torchvision.models.resnet18(), (2, 3, 224, 224), {0: 'batch'}),
        ('mobilenet_v2', lambda: torchvision.models.mobilenet_v2(), (2, 3, 224, 224),
         {0: 'batch'}),
        ('shufflenet_dyn', lambda: torchvision.models.shufflenet_v2_x0_5(), (2, 3, 224, 224),
         {0: 'batch'}),
        ('transformer_dyn', Transformer, (2, 7, 64), {0: 'batch', 1: 'seq'}),
    ]
    for name, make, shape, axes in specs:
        d = os.path.join(outdir, name)
        made.append((name, d))
        if os.path.exists(os.path.join(d, 'ref', '0.npy')):
            continue
        os.makedirs(os.path.join(d, 'in'), exist_ok=True)
        model = make().eval()
        x = torch.randn(*shape)
        torch.onnx.export(model, (x,), os.path.join(d, 'model.onnx'), input_names=['x'],
                          output_names=['y'], dynamic_axes={'x': axes, 'y': {0: 'batch'}},
                          opset_version=13, do_constant_folding=False)
        np.save(os.path.join(d, 'in', 'x.npy'), x.numpy())
        ort_run(oracle, os.path.join(d, 'model.onnx'), os.path.join(d, 'ref'),
                [('x', os.path.join(d, 'in', 'x.npy'))])
    return made


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('omopt')
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument('--shared', default=os.environ.get('OMOPT_SHARED',
                                                       os.path.join(here, '..', '..', 'shared')))
    ap.add_argument('--export', help='folder for exported torchvision/transformer models')
    ap.add_argument('--only', help='comma-separated model names')
    ap.add_argument('--json', help='write the rows here')
    ap.add_argument('--conformance', help='the conformance runner (tests/conformance)')
    ap.add_argument('--stride', type=int, default=1, help='every K-th node-test case')
    a = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError:
        print('check_simplify: numpy/onnx missing, skipped')
        return SKIP
    oracle = os.path.join(a.shared, 'oracle', 'ort_run.js')
    ort_dir = os.environ.get('OM_ORACLE_DIR', os.path.join(os.path.expanduser('~'), '.cache',
                                                           'om-oracle'))
    if not os.path.isdir(os.path.join(a.shared, 'models')) or not shutil.which('node') \
            or not os.path.exists(oracle) \
            or not os.path.isdir(os.path.join(ort_dir, 'node_modules', 'onnxruntime-node')):
        print('check_simplify: ../shared, node or onnxruntime-node missing, skipped')
        return SKIP
    cases = [(os.path.basename(d), d) for d in sorted(glob.glob(os.path.join(a.shared,
                                                                             'models', '*')))
             if os.path.exists(os.path.join(d, 'model.onnx'))]
    if a.export:
        cases += export_models(a.export, oracle)
    if a.only:
        keep = set(a.only.split(','))
        cases = [c for c in cases if c[0] in keep]
    rows = [check(name, d, os.path.abspath(a.omopt), oracle) for name, d in cases]
    if a.conformance:
        suites = [d for d in (os.path.join(a.shared, 'conformance', 'onnx-node-1.23'),
                              '/usr/share/libonnx-testdata/data/node') if os.path.isdir(d)]
        rows += conformance_check(os.path.abspath(a.omopt), os.path.abspath(a.conformance),
                                  suites, max(a.stride, 1))
    print(f"{'model':<18} {'nodes':>6} {'omopt':>6} {'ort basic':>9} {'all nodes':>10} "
          f"{'omopt all':>10} {'outputs':>8} {'time s':>7}  result")
    for r in rows:
        print(f"{r['model']:<18} {r.get('nodes', '-'):>6} {r.get('simplified', '-'):>6} "
              f"{r.get('ort_basic', '-'):>9} {r.get('nodes_all', '-'):>10} "
              f"{r.get('simplified_all', '-'):>10} {r.get('outputs', '-'):>8} "
              f"{r.get('wall_s', '-'):>7}  {'FAIL: ' + r['error'] if 'error' in r else 'ok'}")
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)
    return 1 if any('error' in r for r in rows) else 0


if __name__ == '__main__':
    sys.exit(main())
