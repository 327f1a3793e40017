#!/usr/bin/python3
"""Conv layers of resnet50, mobilenet_v3 and efficientnet_b0, one at a time (N 1, float32, with
bias, one thread): omopt's fast-mode kernel (`omopt run --bench` on a one-node model), oneDNN
(build/bench/conv_dnnl/bench_conv_dnnl: activations NCHW at both ends, in oneDNN's blocked
layout, and blocked with the reorders from and to NCHW) and ONNX Runtime at 'all' (bench/ort_cpu.js), medians in ms, in the same run. The
numbers behind the choice of a Conv fast path (issue 13). No test asserts a time.

usage: bench/conv_layers.py [--runs N] [--omopt PATH] [--dnnl PATH]
"""
import argparse
import json
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, '..', 'build')

# name: C, H(=W), M, K, stride, pad, group
LAYERS = [
    ('r50 stem 7x7/2', 3, 224, 64, 7, 2, 3, 1),
    ('r50 1x1 64-64 56', 64, 56, 64, 1, 1, 0, 1),
    ('r50 3x3 64 56', 64, 56, 64, 3, 1, 1, 1),
    ('r50 1x1 64-256 56', 64, 56, 256, 1, 1, 0, 1),
    ('r50 3x3 128 28', 128, 28, 128, 3, 1, 1, 1),
    ('r50 1x1 512-128 28', 512, 28, 128, 1, 1, 0, 1),
    ('r50 3x3 256 14', 256, 14, 256, 3, 1, 1, 1),
    ('r50 1x1 1024-256 14', 1024, 14, 256, 1, 1, 0, 1),
    ('r50 3x3 512 7', 512, 7, 512, 3, 1, 1, 1),
    ('r50 1x1 512-2048 7', 512, 7, 2048, 1, 1, 0, 1),
    ('mbv3 dw3x3 16 112', 16, 112, 16, 3, 1, 1, 16),
    ('mbv3 1x1 16-64 112', 16, 112, 64, 1, 1, 0, 1),
    ('mbv3 dw5x5 72 28', 72, 28, 72, 5, 1, 2, 72),
    ('effb0 dw3x3 96/2 112', 96, 112, 96, 3, 2, 1, 96),
    ('effb0 1x1 144-24 56', 144, 56, 24, 1, 1, 0, 1),
    ('effb0 dw5x5 672 14', 672, 14, 672, 5, 1, 2, 672),
    ('effb0 1x1 1152-192 7', 1152, 7, 192, 1, 1, 0, 1),
]


def model(path, C, H, M, K, S, P, G):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((M, C // G, K, K)) * (C // G * K * K) ** -0.5).astype(np.float32)
    b = rng.standard_normal(M).astype(np.float32) * 0.1
    node = h.make_node('Conv', ['x', 'w', 'b'], ['y'], kernel_shape=[K, K], strides=[S, S],
                       pads=[P] * 4, group=G)
    g = h.make_graph([node], 'conv', [h.make_tensor_value_info('x', T.FLOAT, [1, C, H, H])],
                     [h.make_tensor_value_info('y', T.FLOAT, None)],
                     [nh.from_array(w, 'w'), nh.from_array(b, 'b')])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 13)])
    m.ir_version = 8
    onnx.save(m, path)
    np.save(path + '.x.npy', rng.standard_normal((1, C, H, H)).astype(np.float32))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=50)
    ap.add_argument('--omopt', default=os.path.join(BUILD, 'tools', 'omopt'))
    ap.add_argument('--dnnl', default=os.path.join(BUILD, 'bench', 'conv_dnnl',
                                                   'bench_conv_dnnl'))
    a = ap.parse_args()
    env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1')
    print('| layer | omopt | oneDNN NCHW | oneDNN blocked | blocked + reorders | ORT all |')
    print('|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        for name, C, H, M, K, S, P, G in LAYERS:
            f = os.path.join(tmp, 'conv.onnx')
            model(f, C, H, M, K, S, P, G)
            p = subprocess.run([a.omopt, 'run', f, '--input', 'x=' + f + '.x.npy', '--bench',
                                str(a.runs), '--no-optimize'], capture_output=True, text=True,
                               env=env)
            ours = float(re.search(r'median ([0-9.]+) ms', p.stdout).group(1))
            q = subprocess.run([a.dnnl, '1', str(C), str(H), str(H), str(M), str(K), str(K),
                                str(S), str(P), str(G), str(a.runs)], capture_output=True,
                               text=True, env=env)
            d = json.loads(q.stdout) if q.returncode == 0 else {'nchw_ms': 0, 'blocked_ms': 0,
                                                                'edges_ms': 0}
            r = subprocess.run(['node', os.path.join(HERE, 'ort_cpu.js'), f, str(a.runs),
                                '--level', 'all', 'x=' + f + '.x.npy'], capture_output=True,
                               text=True)
            ort = json.loads(r.stdout.strip().splitlines()[-1])['run_ms_median']
            print('| %s | %.3f | %.3f | %.3f | %.3f | %.3f |' % (
                name, ours, d['nchw_ms'], d['blocked_ms'], d['edges_ms'], ort), flush=True)


if __name__ == '__main__':
    main()
