#!/usr/bin/python3
"""bench/kvcache_model.py — writes the KV-cache models of issue 34's TensorScatter and quantized
GroupQueryAttention rows in bench/README.md into OUT/model.onnx and OUT/in/*.npy, for
bench/compare_ort.py:

    python3 bench/kvcache_model.py OUT tscatter S MAX [--circular] [--batch B]
    python3 bench/kvcache_model.py OUT gqa-quant S PAST --bits 8|4 [--per-channel]

tscatter: one TensorScatter (opset 24) writing an update [B, 8, S, 128] float into a cache
[B, 8, MAX, 128] (a graph input, so both runtimes copy it) at write_indices MAX - S - 3
(circular: MAX - 3, wrapping); the graph's output is a Slice of the present's rows MAX - S - 3
to MAX - 3 (circular: rows 0 to S), so that no runtime hands a whole cache back. gqa-quant:
one com.microsoft GroupQueryAttention, 32 query heads, 8 kv heads, head size 128, rotary,
with an int8 or int4 cache of PAST rows and k/v scales (per tensor or per channel), S new
tokens; only y is a graph output (the presents stay node outputs). Needs numpy and onnx."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(out, nodes, g_in, g_out, inits, feeds, opsets):
    graph = helper.make_graph(nodes, 'kv', g_in, g_out, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    os.makedirs(os.path.join(out, 'in'), exist_ok=True)
    onnx.save(m, os.path.join(out, 'model.onnx'))
    for n, v in feeds.items():
        np.save(os.path.join(out, 'in', n + '.npy'), v)


def tscatter(a, r):
    B, S, M, H, D = a.batch, a.s, a.n, 8, 128
    feeds = {'past': r.standard_normal((B, H, M, D)).astype(np.float32),
             'update': r.standard_normal((B, H, S, D)).astype(np.float32),
             'write_indices': np.full(B, M - 3 if a.circular else M - S - 3, np.int64)}
    node = helper.make_node('TensorScatter', list(feeds), ['present'],
                            mode='circular' if a.circular else 'linear')
    lo = 0 if a.circular else M - S - 3
    inits = [numpy_helper.from_array(np.array([lo], np.int64), 'starts'),
             numpy_helper.from_array(np.array([lo + S], np.int64), 'ends'),
             numpy_helper.from_array(np.array([2], np.int64), 'axes')]
    sl = helper.make_node('Slice', ['present', 'starts', 'ends', 'axes'], ['rows'])
    g_in = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
            for n, v in feeds.items()]
    g_out = [helper.make_tensor_value_info('rows', TensorProto.FLOAT, [B, H, S, D])]
    save(a.out, [node, sl], g_in, g_out, inits, feeds, [('', 24)])


def gqa_quant(a, r):
    S, P, H, KV, D = a.s, a.n, 32, 8, 128
    total = P + S
    cdt = np.int8 if a.bits == 8 else np.uint8
    width, lo, hi = (D, -128, 128) if a.bits == 8 else (D // 2, 0, 256)
    n = KV * D if a.per_channel else 1
    feeds = {'query': r.standard_normal((1, S, H * D)).astype(np.float32),
             'key': r.standard_normal((1, S, KV * D)).astype(np.float32),
             'value': r.standard_normal((1, S, KV * D)).astype(np.float32),
             'past_key': r.integers(lo, hi, (1, KV, P, width)).astype(cdt),
             'past_value': r.integers(lo, hi, (1, KV, P, width)).astype(cdt),
             'seqlens_k': np.array([total - 1], np.int32),
             'total_sequence_length': np.array(total, np.int32)}
    step = 0.03 if a.bits == 8 else 0.5
    angle = np.outer(np.arange(total + 64), 10000.0 ** (-np.arange(D // 2) * 2 / D))
    inits = [numpy_helper.from_array(np.cos(angle).astype(np.float32), 'cos_cache'),
             numpy_helper.from_array(np.sin(angle).astype(np.float32), 'sin_cache'),
             numpy_helper.from_array(np.full(n, step, np.float32), 'k_scale'),
             numpy_helper.from_array(np.full(n, step, np.float32), 'v_scale')]
    kind = 'PER_CHANNEL' if a.per_channel else 'PER_TENSOR'
    names = list(feeds) + ['cos_cache', 'sin_cache', '', '', '', 'k_scale', 'v_scale']
    node = helper.make_node('GroupQueryAttention', names, ['y', 'present_key', 'present_value'],
                            domain='com.microsoft', num_heads=H, kv_num_heads=KV, do_rotary=1,
                            k_quant_type=kind, v_quant_type=kind, kv_cache_bit_width=a.bits)
    g_in = [helper.make_tensor_value_info(k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
            for k, v in feeds.items()]
    g_out = [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, S, H * D])]
    save(a.out, [node], g_in, g_out, inits, feeds, [('', 21), ('com.microsoft', 1)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('out')
    ap.add_argument('kind', choices=['tscatter', 'gqa-quant'])
    ap.add_argument('s', type=int)
    ap.add_argument('n', type=int, help='tscatter: MAX; gqa-quant: PAST')
    ap.add_argument('--circular', action='store_true')
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--bits', type=int, default=8, choices=[8, 4])
    ap.add_argument('--per-channel', action='store_true')
    a = ap.parse_args()
    r = np.random.default_rng(1)
    (tscatter if a.kind == 'tscatter' else gqa_quant)(a, r)


if __name__ == '__main__':
    main()
