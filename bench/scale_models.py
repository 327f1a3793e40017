#!/usr/bin/python3
"""Big decoder models: `omopt simplify` and `omopt run` time and peak memory, beside ONNX
Runtime's basic optimizer + save (issue 14).

Models are Llama-style decoders (RMSNorm, rotary embeddings, causal attention built from shape
ops, SwiGLU MLP) exported by torch.onnx.export with random weights, dynamic batch and sequence,
cached in ~/.cache/omopt-bench (never committed):

  1g  hidden 2048, MLP 5632, 4 layers, vocabulary 16000: ~1.08 GB, weights inline
  8g  hidden 8192, MLP 28672, 1 layer, vocabulary 65600: ~8.2 GB in external data, the
      embedding and the output projection 2.15 GB each (single initializers over 2 GB)

Peak memory of each command is sampled from /proc/PID/status every 10 ms: VmRSS (all resident
pages), RssAnon (heap and other anonymous memory) and RssFile (mapped file pages, which the
kernel can drop and reread). ONNX Runtime runs through ../shared/oracle/ort_run.js.

usage: bench/scale_models.py [--models 1g,8g] [--build build] [--keep] [--no-ort]
The 8g model is deleted after its run unless --keep (it takes ~8.2 GB of disk).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.expanduser('~/.cache/omopt-bench')
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(ROOT, '..', 'shared'))
SIZES = {
    '1g': dict(hidden=2048, mlp=5632, layers=4, vocab=16000, heads=16),
    '8g': dict(hidden=8192, mlp=28672, layers=1, vocab=65600, heads=64),
}


# ---- the model (run in a child: torch stays out of the measuring process) -------------------

def export(kind, out):
    import torch
    torch.manual_seed(0)
    cfg = SIZES[kind]
    H, F, L, V, NH = cfg['hidden'], cfg['mlp'], cfg['layers'], cfg['vocab'], cfg['heads']
    D = H // NH

    def weight(i, o):  # [in, out]: MatMul reads it as stored; scale of a trained Linear
        w = torch.empty(i, o)
        w.normal_(0.0, i ** -0.5)
        return torch.nn.Parameter(w, requires_grad=False)

    class RMSNorm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.g = torch.nn.Parameter(1.0 + 0.1 * torch.randn(H), requires_grad=False)

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.g

    def rotate(x, cos, sin):
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = RMSNorm(), RMSNorm()
            self.q, self.k, self.v, self.o = (weight(H, H) for _ in range(4))
            self.gate, self.up, self.down = weight(H, F), weight(H, F), weight(F, H)

        def forward(self, x, cos, sin, mask):
            b, s = x.shape[0], x.shape[1]
            h = self.n1(x)
            q = (h @ self.q).view(b, s, NH, D).transpose(1, 2)
            k = (h @ self.k).view(b, s, NH, D).transpose(1, 2)
            v = (h @ self.v).view(b, s, NH, D).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            a = torch.softmax(q @ k.transpose(-1, -2) * (D ** -0.5) + mask, dim=-1) @ v
            x = x + a.transpose(1, 2).reshape(b, s, H) @ self.o
            h = self.n2(x)
            return x + (torch.nn.functional.silu(h @ self.gate) * (h @ self.up)) @ self.down

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            e = torch.empty(V, H)
            e.normal_(0.0, 1.0)
            self.embed = torch.nn.Parameter(e, requires_grad=False)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(L))
            self.norm = RMSNorm()
            self.head = weight(H, V)
            inv = 1.0 / (10000 ** (torch.arange(0, D, 2).float() / D))
            self.register_buffer('inv', inv)

        def forward(self, ids):
            s = ids.shape[1]
            x = self.embed[ids]
            pos = torch.arange(s, dtype=torch.float32)
            f = pos[:, None] * self.inv[None, :]
            f = torch.cat((f, f), dim=-1)
            cos, sin = f.cos(), f.sin()
            mask = torch.triu(torch.full((s, s), -1e9), diagonal=1)
            for b in self.blocks:
                x = b(x, cos, sin, mask)
            return self.norm(x) @ self.head

    with torch.no_grad():
        m = Decoder().eval()
        ids = torch.randint(0, V, (1, 16))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        torch.onnx.export(m, (ids,), out, input_names=['input_ids'], output_names=['logits'],
                          dynamic_axes={'input_ids': {0: 'batch', 1: 'seq'},
                                        'logits': {0: 'batch', 1: 'seq'}},
                          opset_version=17, do_constant_folding=True)


def model_path(kind):
    return os.path.join(CACHE, kind, 'model.onnx')


def folder_bytes(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))


def ensure(kind):
    path = model_path(kind)
    if not os.path.exists(path):
        print(f'exporting {kind} to {path} ...', file=sys.stderr, flush=True)
        t = time.time()
        subprocess.run([sys.executable, __file__, '--export', kind], check=True)
        print(f'  {time.time() - t:.0f} s', file=sys.stderr, flush=True)
    return path


# ---- measuring ------------------------------------------------------------------------------

def status_kb(pid):
    vals = {}
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                k, _, v = line.partition(':')
                if k in ('VmRSS', 'RssAnon', 'RssFile'):
                    vals[k] = int(v.split()[0])
    except OSError:
        pass
    return vals


def measure(cmd, env=None):
    """Runs cmd; returns wall seconds, peaks (MB) of VmRSS, RssAnon, RssFile and stdout."""
    peak = {'VmRSS': 0, 'RssAnon': 0, 'RssFile': 0}
    t = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    while p.poll() is None:
        for k, v in status_kb(p.pid).items():
            peak[k] = max(peak[k], v)
        time.sleep(0.01)
    wall = time.time() - t
    out, err = p.communicate()
    if p.returncode:
        raise RuntimeError(f'{cmd[0]} failed ({p.returncode}): {err.decode()[-2000:]}')
    return dict(wall=wall, rss=peak['VmRSS'] / 1024, anon=peak['RssAnon'] / 1024,
                file=peak['RssFile'] / 1024, out=out.decode(), err=err.decode())


def drop_outputs(path):
    for p in [path] + glob.glob(glob.escape(path) + '.*.data'):  # omopt names data by content
        if os.path.exists(p):
            os.remove(p)


SESSION_CHILD = r'''
import json, sys, time
import numpy as np
import omopt
t = time.time()
s = omopt.InferenceSession(sys.argv[1])
created = time.time() - t
ids = np.load(sys.argv[2])
t = time.time()
s.run(None, {'input_ids': ids})
print(json.dumps({'create_s': created, 'run_s': time.time() - t}))
'''


def bench(kind, a):
    path = ensure(kind)
    d = os.path.dirname(path)
    size = folder_bytes(d) / 2 ** 20
    omopt_bin = os.path.join(a.build, 'tools', 'omopt')
    import numpy as np
    ids_path = os.path.join(d, 'ids.npy')
    np.save(ids_path, np.random.default_rng(0).integers(0, SIZES[kind]['vocab'], (1, 16)))
    rows = {'model MB': size}
    simp = os.path.join(d, 'simplified.onnx')
    drop_outputs(simp)
    r = measure([omopt_bin, 'simplify', path, simp])
    rows['omopt simplify'] = r
    ort_opt = None
    oracle = os.path.join(SHARED, 'oracle', 'ort_run.js')
    if kind == '1g' and not a.no_ort and os.path.exists(oracle):
        ort_out = os.path.join(d, 'ort_basic.onnx')
        drop_outputs(ort_out)
        r = measure(['node', oracle, path, os.path.join(d, 'ort_opt_out'),
                     f'input_ids={ids_path}', '--level', 'basic', '--save-optimized', ort_out])
        r['report'] = json.loads(r['out'].strip().splitlines()[-1])
        rows['ORT basic optimize+save (+1 run)'] = r
        ort_opt = r
        # ONNX Runtime gives the original's outputs on the simplified model
        r0 = measure(['node', oracle, path, os.path.join(d, 'ort_orig'), f'input_ids={ids_path}'])
        r1 = measure(['node', oracle, simp, os.path.join(d, 'ort_simp'), f'input_ids={ids_path}'])
        rows['ORT run (no optimization, original)'] = r0
        rows['ORT run (no optimization, simplified)'] = r1
        y0 = np.load(os.path.join(d, 'ort_orig', '0.npy'))
        y1 = np.load(os.path.join(d, 'ort_simp', '0.npy'))
        rows['max |diff| ORT(original) vs ORT(simplified)'] = float(np.abs(y0 - y1).max())
        rows['max |logit|'] = float(np.abs(y0).max())
        ra = measure(['node', oracle, path, os.path.join(d, 'ort_all'), f'input_ids={ids_path}',
                      '--level', 'all'])
        ra['report'] = json.loads(ra['out'].strip().splitlines()[-1])
        rows['ORT run (level all)'] = ra
        drop_outputs(ort_out)
    out_dir = os.path.join(d, 'omopt_out')
    rows['omopt run'] = measure([omopt_bin, 'run', path, '--input', f'input_ids={ids_path}',
                                 '--output-dir', out_dir, '--output-format', 'npy'])
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python'),
               OMOPT_LIBRARY=os.path.join(a.build, 'libomopt.so.0'))
    r = measure([sys.executable, '-c', SESSION_CHILD, path, ids_path], env=env)
    r['report'] = json.loads(r['out'].strip().splitlines()[-1])
    rows['omopt python session'] = r
    if kind == '1g' and ort_opt is not None and os.path.exists(os.path.join(out_dir,
                                                                            'output_0.npy')):
        y2 = np.load(os.path.join(out_dir, 'output_0.npy'))
        rows['max |diff| omopt run vs ORT(original)'] = float(np.abs(y2 - y0).max())
    simp_size = sum(os.path.getsize(p) for p in [simp] + glob.glob(glob.escape(simp) + '.*.data')
                    if os.path.exists(p))
    rows['simplified MB'] = simp_size / 2 ** 20
    drop_outputs(simp)
    return rows


def report(kind, rows):
    print(f'\n### {kind}: {rows["model MB"]:.0f} MiB, simplified {rows["simplified MB"]:.0f} MiB')
    print('| command | wall s | peak RSS MiB | peak anon MiB | peak file MiB | notes |')
    print('|---|---|---|---|---|---|')
    for k, r in rows.items():
        if not isinstance(r, dict):
            continue
        note = ''
        if 'report' in r:
            rep = r['report']
            if 'session_create_ms' in rep:
                note = f'session create {rep["session_create_ms"] / 1000:.2f} s'
            if 'create_s' in rep:
                note = f'load+optimize+session {rep["create_s"]:.2f} s, run {rep["run_s"]:.2f} s'
        print(f'| {k} | {r["wall"]:.2f} | {r["rss"]:.0f} | {r["anon"]:.0f} | {r["file"]:.0f} '
              f'| {note} |')
    for k, v in rows.items():
        if isinstance(v, float) and 'MB' not in k:
            print(f'- {k}: {v:.3g}')
    s, o = rows.get('omopt simplify'), rows.get('ORT basic optimize+save (+1 run)')
    if s:
        print(f'- simplify peak RSS / model size: {s["rss"] / rows["model MB"]:.2f}, '
              f'peak anon / model size: {s["anon"] / rows["model MB"]:.2f}')
    if s and o:
        create = o['report']['session_create_ms'] / 1000
        print(f'- simplify wall / ORT session create (basic optimize+save): '
              f'{s["wall"] / create:.2f}; / ORT whole command: {s["wall"] / o["wall"]:.2f}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--export')
    ap.add_argument('--models', default='1g,8g')
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--no-ort', action='store_true')
    a = ap.parse_args()
    if a.export:
        export(a.export, model_path(a.export))
        return
    for kind in a.models.split(','):
        rows = bench(kind, a)
        report(kind, rows)
        sys.stdout.flush()
        if kind == '8g' and not a.keep:
            shutil.rmtree(os.path.dirname(model_path(kind)))


if __name__ == '__main__':
    main()
