#!/usr/bin/python3
"""Quantizes float ONNX models into the formats ONNX Runtime's quantizer emits, written here
from what onnxruntime.quantization does (this machine has no onnxruntime Python package), so
that omopt's int8 paths can be measured on the models users bring.

Subcommands (one function each):
  dynamic IN.onnx OUT.onnx   as quantize_dynamic(IN, OUT) with its defaults: weight_type
                             QInt8, per_channel False, reduce_range False, MatMulConstBOnly
                             (only MatMul/Gemm whose B is an initializer). Gemm is first
                             rewritten to MatMul + Add (ONNXQuantizer.replace_gemm_with_matmul,
                             dynamic mode); each MatMul then becomes
                               DynamicQuantizeLinear(A) -> A_quantized, A_scale, A_zero_point
                               MatMulInteger(A_quantized, W_quantized, A_zero_point,
                                             W_zero_point) -> int32
                               Cast(to float), Mul(A_scale, W_scale), Mul(cast, scales)
                             with W symmetric per tensor: scale = max|W| / 127, zero point 0,
                             W_quantized = clip(round_half_even(W / scale), -127, 127).
                             One DynamicQuantizeLinear per activation, shared by its readers.
  static IN.onnx OUT.onnx --calib DIR
                             as quantize_static(IN, OUT, quant_format=QDQ, per_channel=True)
                             with MinMax calibration over DIR's .npy samples (bench/quantize_qdq.py
                             says what it emits and how DIR is laid out).

usage: /usr/bin/python3 bench/quantize.py dynamic IN.onnx OUT.onnx
       /usr/bin/python3 bench/quantize.py static IN.onnx OUT.onnx --calib DIR
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

from onnx_graph import inits as _inits, keep_initializers, set_nodes
from quantize_qdq import static


def _gemm_to_matmul(graph):
    """Gemm(A, B, C) with alpha = beta = 1, transA = 0 and an initializer B -> MatMul + Add
    (B transposed in place when transB), as ONNX Runtime's replace_gemm_with_matmul."""
    inits = _inits(graph)
    out = []
    for n in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if (n.op_type != 'Gemm' or attrs.get('alpha', 1.0) != 1.0 or
                attrs.get('beta', 1.0) != 1.0 or attrs.get('transA', 0) != 0 or
                n.input[1] not in inits):
            out.append(n)
            continue
        b = n.input[1]
        if attrs.get('transB', 0):
            w = numpy_helper.to_array(inits[b])
            t = numpy_helper.from_array(np.ascontiguousarray(w.T), b + '_Transposed')
            graph.initializer.append(t)
            inits[t.name] = t
            b = t.name
        has_c = len(n.input) > 2 and n.input[2]
        mm_out = n.output[0] + '_MatMul' if has_c else n.output[0]
        out.append(helper.make_node('MatMul', [n.input[0], b], [mm_out], n.name + '_MatMul'))
        if has_c:
            out.append(helper.make_node('Add', [mm_out, n.input[2]], [n.output[0]],
                                        n.name + '_Add'))
    set_nodes(graph, out)


def _quantize_weight(graph, name, done):
    """W symmetric int8 per tensor; the names ONNX Runtime gives them"""
    if name in done:
        return done[name]
    w = numpy_helper.to_array(_inits(graph)[name]).astype(np.float32)
    absmax = float(max(abs(float(w.min(initial=0.0))), abs(float(w.max(initial=0.0)))))
    scale = np.float32(absmax * 2 / 254.0) if absmax > 0 else np.float32(1.0)
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    names = (name + '_quantized', name + '_scale', name + '_zero_point')
    graph.initializer.extend([numpy_helper.from_array(q, names[0]),
                              numpy_helper.from_array(np.array(scale, np.float32), names[1]),
                              numpy_helper.from_array(np.array(0, np.int8), names[2])])
    done[name] = names
    return names


def dynamic(src, dst):
    model = onnx.load(src)
    graph = model.graph
    _gemm_to_matmul(graph)
    inits = _inits(graph)
    weights, acts, out = {}, {}, []
    for n in graph.node:
        if (n.op_type != 'MatMul' or n.input[1] not in inits or
                inits[n.input[1]].data_type != TensorProto.FLOAT or
                len(inits[n.input[1]].dims) != 2):
            out.append(n)
            continue
        a = n.input[0]
        if a not in acts:
            acts[a] = (a + '_quantized', a + '_scale', a + '_zero_point')
            out.append(helper.make_node('DynamicQuantizeLinear', [a], list(acts[a]),
                                        a + '_QuantizeLinear'))
        aq, asc, azp = acts[a]
        wq, wsc, wzp = _quantize_weight(graph, n.input[1], weights)
        base = n.name or n.output[0]
        mi = n.output[0] + '_output_quantized'
        out.append(helper.make_node('MatMulInteger', [aq, wq, azp, wzp], [mi], base + '_quant'))
        out.append(helper.make_node('Cast', [mi], [mi + '_cast_output'], mi + '_cast',
                                    to=TensorProto.FLOAT))
        sm = base + '_quant_scales_mul'
        out.append(helper.make_node('Mul', [asc, wsc], [sm + ':0'], sm))
        out.append(helper.make_node('Mul', [mi + '_cast_output', sm + ':0'], [n.output[0]],
                                    base + '_quant_output_scale_mul'))
    set_nodes(graph, out)
    keep_initializers(graph, {i for n in graph.node for i in n.input} |
                      {o.name for o in graph.output})
    for op in model.opset_import:
        if op.domain in ('', 'ai.onnx') and op.version < 11:
            op.version = 11
    if not any(op.domain == 'com.microsoft' for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid('com.microsoft', 1))
    onnx.checker.check_model(model)
    onnx.save(model, dst)


def main(argv):
    if len(argv) == 4 and argv[1] == 'dynamic':
        dynamic(argv[2], argv[3])
    elif len(argv) == 6 and argv[1] == 'static' and argv[4] == '--calib':
        static(argv[2], argv[3], argv[5])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
