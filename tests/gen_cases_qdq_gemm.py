#!/usr/bin/python3
"""Cases for the static quantizer's QDQ Gemm groups against ONNX Runtime (../shared/oracle), which
fast mode runs as com.microsoft QGemm (passes/fuse_qdq.c), written to tests/cases/dynq/qdq_gemm_*
in the backend-test layout: DequantizeLinear of x (QuantizeLinear of the float input) and of an
int8 weight initializer, with or without an int32 bias of scale x_scale * w_scale, Gemm with
transB 0 (per-column scales, axis 1) or 1 (axis 0), and the result quantized and dequantized
again or left float; uint8 and int8 activations, a dynamic row count. The weights stay within
64 in magnitude: ONNX Runtime's u8s8 kernel on AVX2 without VNNI saturates pairs of products
beyond that (vpmaddubsw), which omopt's exact sums do not.
usage: /usr/bin/python3 tests/gen_cases_qdq_gemm.py
"""
import os
import shutil
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..',
                                                                            'shared')), 'oracle'))
from mkcase import graph_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'dynq')


def model(K, N, trans_b, per_channel, bias, q_out, xt, alpha, rng):
    xs, xz = np.float32(0.05), (np.uint8(120) if xt == np.uint8 else np.int8(-7))
    w = rng.integers(-64, 65, (N, K) if trans_b else (K, N)).astype(np.int8)
    ws = (rng.random(N if per_channel else 1) * 0.01 + 0.002).astype(np.float32)
    if not per_channel:
        ws = ws.reshape(())
    inits = [numpy_helper.from_array(np.array(xs), 'xs'), numpy_helper.from_array(np.array(xz), 'xz'),
             numpy_helper.from_array(w, 'wq'), numpy_helper.from_array(ws, 'ws'),
             numpy_helper.from_array(np.zeros(ws.shape, np.int8), 'wz'),
             numpy_helper.from_array(np.array(np.float32(0.08)), 'ys'),
             numpy_helper.from_array(np.array(np.uint8(128)), 'yz')]
    nodes = [helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
             helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
             helper.make_node('DequantizeLinear', ['wq', 'ws', 'wz'], ['wd'], axis=0 if trans_b else 1)]
    ins = ['xd', 'wd']
    if bias:
        inits += [numpy_helper.from_array(rng.integers(-3000, 3000, N).astype(np.int32), 'bq'),
                  numpy_helper.from_array((xs * ws).astype(np.float32).reshape(-1), 'bs'),
                  numpy_helper.from_array(np.zeros(N if per_channel else 1, np.int32), 'bz')]
        nodes.append(helper.make_node('DequantizeLinear', ['bq', 'bs', 'bz'], ['bd'], axis=0))
        ins.append('bd')
    nodes.append(helper.make_node('Gemm', ins, ['g' if q_out else 'y'], transB=trans_b, alpha=alpha))
    if q_out:
        nodes += [helper.make_node('QuantizeLinear', ['g', 'ys', 'yz'], ['yq']),
                  helper.make_node('DequantizeLinear', ['yq', 'ys', 'yz'], ['y'])]
    g = helper.make_graph(nodes, 'qdq_gemm', [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['M', K])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


# name: K, N, transB, per-channel, bias, QuantizeLinear after, x's type, alpha, rows
CASES = {
    'qdq_gemm_tb_q_u8': (1280, 40, 1, True, True, True, np.uint8, 1.0, 3),
    'qdq_gemm_q_s8_tensor': (96, 24, 0, False, True, True, np.int8, 1.0, 2),
    'qdq_gemm_float_out_alpha': (300, 70, 0, True, False, False, np.int8, 0.75, 5),
    'qdq_gemm_tb_float_out_bias': (64, 10, 1, True, True, False, np.uint8, 1.0, 1),
}

if __name__ == '__main__':
    rng = np.random.default_rng(35)
    for name, (K, N, tb, pc, b, q, xt, alpha, M) in CASES.items():
        d = os.path.join(OUT, name)
        shutil.rmtree(d, ignore_errors=True)
        x = (rng.standard_normal((M, K)) * 3).astype(np.float32)
        graph_case(d, model(K, N, tb, pc, b, q, xt, alpha, rng), {'x': x})
        print(name)
