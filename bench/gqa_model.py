#!/usr/bin/python3
"""bench/gqa_model.py — writes a one-node com.microsoft GroupQueryAttention model (32 query heads,
8 kv heads, head size 128 by default, rotary caches as initializers) and its inputs (query, key,
value [1, S, *], past key/value [1, 8, PAST, 128], seqlens_k, total_sequence_length) into
OUT/model.onnx and OUT/in/*.npy, for bench/compare_ort.py:

    python3 bench/gqa_model.py OUT S PAST [--heads 32] [--kv-heads 8] [--head-size 128]
                               [--rotary] [--float16] [--y-only]

S 1 with PAST 1024 is one decoded token after 1,024 (present grows to 1,025 rows); S 128 with
PAST 0 a 128-token prompt. --y-only leaves the presents out of the graph's outputs (the node
still writes them): the time of the node without handing 2 x 4 MB of presents back (ONNX
Runtime's node binding copies its outputs). Needs numpy and onnx."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('out')
    ap.add_argument('s', type=int)
    ap.add_argument('past', type=int)
    ap.add_argument('--heads', type=int, default=32)
    ap.add_argument('--kv-heads', type=int, default=8)
    ap.add_argument('--head-size', type=int, default=128)
    ap.add_argument('--rotary', action='store_true')
    ap.add_argument('--float16', action='store_true')
    ap.add_argument('--y-only', action='store_true')
    a = ap.parse_args()
    dt = np.float16 if a.float16 else np.float32
    et = TensorProto.FLOAT16 if a.float16 else TensorProto.FLOAT
    S, P, H, KV, D = a.s, a.past, a.heads, a.kv_heads, a.head_size
    total = P + S
    r = np.random.default_rng(1)
    feeds = {'query': r.standard_normal((1, S, H * D)).astype(dt),
             'key': r.standard_normal((1, S, KV * D)).astype(dt),
             'value': r.standard_normal((1, S, KV * D)).astype(dt)}
    if P:
        feeds['past_key'] = r.standard_normal((1, KV, P, D)).astype(dt)
        feeds['past_value'] = r.standard_normal((1, KV, P, D)).astype(dt)
    feeds['seqlens_k'] = np.array([total - 1], np.int32)
    feeds['total_sequence_length'] = np.array(total, np.int32)
    names = ['query', 'key', 'value', 'past_key' if P else '', 'past_value' if P else '',
             'seqlens_k', 'total_sequence_length']
    inits = []
    attrs = dict(num_heads=H, kv_num_heads=KV)
    if a.rotary:
        angle = np.outer(np.arange(total + 64), 10000.0 ** (-np.arange(D // 2) * 2 / D))
        inits = [numpy_helper.from_array(np.cos(angle).astype(dt), 'cos_cache'),
                 numpy_helper.from_array(np.sin(angle).astype(dt), 'sin_cache')]
        names += ['cos_cache', 'sin_cache']
        attrs['do_rotary'] = 1
    node = helper.make_node('GroupQueryAttention', names, ['y', 'present_key', 'present_value'],
                            domain='com.microsoft', **attrs)
    g_in = [helper.make_tensor_value_info(n, et if v.dtype == dt else TensorProto.INT32,
                                          v.shape) for n, v in feeds.items()]
    g_out = [helper.make_tensor_value_info('y', et, [1, S, H * D]),
             helper.make_tensor_value_info('present_key', et, [1, KV, total, D]),
             helper.make_tensor_value_info('present_value', et, [1, KV, total, D])]
    if a.y_only:
        g_out = g_out[:1]
    graph = helper.make_graph([node], 'gqa', g_in, g_out, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                helper.make_opsetid('com.microsoft', 1)])
    m.ir_version = 8
    os.makedirs(os.path.join(a.out, 'in'), exist_ok=True)
    onnx.save(m, os.path.join(a.out, 'model.onnx'))
    for n, v in feeds.items():
        np.save(os.path.join(a.out, 'in', n + '.npy'), v)


if __name__ == '__main__':
    main()
