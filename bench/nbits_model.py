#!/usr/bin/python3
"""bench/nbits_model.py — writes a one-node com.microsoft MatMulNBits model (4-bit codes, or
--bits 8 or 2, and scales drawn at random, packed zero points, K = N = 4096 by default, block 32) and one input
A [1, ROWS, K] into OUT/model.onnx and OUT/in/a.npy, for bench/compare_ort.py:

    python3 bench/nbits_model.py OUT ROWS [--k 4096] [--n 4096] [--block 32] [--bits 4] [--accuracy-level 0]

ROWS 1 is one decoded token, 64 a prompt. Needs numpy and onnx."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('out')
    ap.add_argument('rows', type=int)
    ap.add_argument('--k', type=int, default=4096)
    ap.add_argument('--n', type=int, default=4096)
    ap.add_argument('--block', type=int, default=32)
    ap.add_argument('--accuracy-level', type=int, default=0)
    ap.add_argument('--bits', type=int, default=4, choices=(2, 4, 8))
    a = ap.parse_args()
    k, n, bs = a.k, a.n, a.block
    kb = (k + bs - 1) // bs
    r = np.random.default_rng(1)
    b = r.integers(0, 256, (n, kb, bs * a.bits // 8), dtype=np.uint8)
    scales = (r.random((n, kb)) * 0.02 + 0.001).astype(np.float32)
    zp = r.integers(0, 256, (n, (kb * a.bits + 7) // 8), dtype=np.uint8)
    node = helper.make_node('MatMulNBits', ['a', 'B', 'scales', 'zp'], ['y'],
                            domain='com.microsoft', K=k, N=n, bits=a.bits, block_size=bs,
                            accuracy_level=a.accuracy_level)
    g = helper.make_graph(
        [node], 'nbits', [helper.make_tensor_value_info('a', TensorProto.FLOAT,
                                                        ['batch', 'seq', k])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(b, 'B'), numpy_helper.from_array(scales, 'scales'),
                     numpy_helper.from_array(zp, 'zp')])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17),
                                            helper.make_opsetid('com.microsoft', 1)])
    m.ir_version = 8
    os.makedirs(os.path.join(a.out, 'in'), exist_ok=True)
    onnx.save(m, os.path.join(a.out, 'model.onnx'))
    np.save(os.path.join(a.out, 'in', 'a.npy'),
            r.standard_normal((1, a.rows, k)).astype(np.float32))


if __name__ == '__main__':
    main()
