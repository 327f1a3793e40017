#!/usr/bin/python3
"""bench/mha_model.py — writes a one-node com.microsoft MultiHeadAttention, Attention or
QAttention model (12 heads of 64 by default) and its inputs into OUT/model.onnx and
OUT/in/*.npy, for bench/compare_ort.py:

    python3 bench/mha_model.py OUT {mha,attention,qattention} S PAST [--heads 12]
                               [--head-size 64] [--batch 1] [--y-only]

MultiHeadAttention: query, key, value [B, S, 768] with bias [3 * 768] (an initializer) and,
with PAST > 0, past_key/past_value [B, 12, PAST, 64] -> presents, unidirectional. Attention /
QAttention: input [B, S, 768] times weights [768, 2304] (initializers; QAttention's int8 with a
per-tensor scale, input uint8) plus bias, mask_index [B] (all S + PAST keys), with PAST > 0 a
past [2, B, 12, PAST, 64] -> present, unidirectional. --y-only leaves the presents out of the
graph's outputs (the node still writes them): ONNX Runtime's node binding copies every output
back. Needs numpy and onnx."""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('out')
    ap.add_argument('op', choices=('mha', 'attention', 'qattention'))
    ap.add_argument('s', type=int)
    ap.add_argument('past', type=int)
    ap.add_argument('--heads', type=int, default=12)
    ap.add_argument('--head-size', type=int, default=64)
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--y-only', action='store_true')
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    B, S, N, H, P = a.batch, a.s, a.heads, a.head_size, a.past
    D = N * H
    feeds, inits, names = {}, [], []

    def feed(name, arr):
        feeds[name] = arr
        names.append(name)

    def init(name, arr):
        inits.append(numpy_helper.from_array(arr, name))
        names.append(name)

    f32 = np.float32
    attrs = {'num_heads': N}
    if P:
        attrs['unidirectional'] = 1
    if a.op == 'mha':
        for n in ('query', 'key', 'value'):
            feed(n, rng.standard_normal((B, S, D)).astype(f32))
        init('bias', (0.1 * rng.standard_normal(3 * D)).astype(f32))
        names += ['', '']  # key_padding_mask, attention_bias
        if P:
            feed('past_key', rng.standard_normal((B, N, P, H)).astype(f32))
            feed('past_value', rng.standard_normal((B, N, P, H)).astype(f32))
        outs = ['y', 'present_key', 'present_value'] if P else ['y']
        op = 'MultiHeadAttention'
    else:
        if a.op == 'attention':
            feed('input', rng.standard_normal((B, S, D)).astype(f32))
            init('weights', (rng.standard_normal((D, 3 * D)) / np.sqrt(D)).astype(f32))
            init('bias', (0.1 * rng.standard_normal(3 * D)).astype(f32))
            op = 'Attention'
        else:
            feed('input', rng.integers(0, 256, (B, S, D)).astype(np.uint8))
            init('weight', rng.integers(-127, 128, (D, 3 * D)).astype(np.int8))
            init('bias', (0.1 * rng.standard_normal(3 * D)).astype(f32))
            init('input_scale', np.array(0.01, f32))
            init('weight_scale', np.array(0.002, f32))
            op = 'QAttention'
        feed('mask_index', np.full(B, S + P, np.int32))
        if op == 'QAttention':
            names += ['', '']  # zero points
        if P:
            feed('past', rng.standard_normal((2, B, N, P, H)).astype(f32))
        outs = ['y', 'present'] if P else ['y']
    node = helper.make_node(op, names, outs, domain='com.microsoft', **attrs)
    g_in = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype],
                                          v.shape)
            for n, v in feeds.items()]
    kept = outs[:1] if a.y_only else outs
    g_out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in kept]
    graph = helper.make_graph([node], op.lower(), g_in, g_out, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                    helper.make_opsetid('com.microsoft', 1)])
    os.makedirs(os.path.join(a.out, 'in'), exist_ok=True)
    onnx.save(model, os.path.join(a.out, 'model.onnx'))
    for n, v in feeds.items():
        np.save(os.path.join(a.out, 'in', n + '.npy'), v)


if __name__ == '__main__':
    main()
