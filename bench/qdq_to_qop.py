#!/usr/bin/python3
"""qdq_to_qop.py — a static int8 QDQ model (bench/quantize.py static) rewritten in ONNX
Runtime's QOperator format, as onnxruntime.quantization's quantize_static(...,
quant_format=QuantFormat.QOperator) writes it (written from that quantizer's rules: there is no
onnxruntime Python package here): every op whose float inputs are all DequantizeLinear outputs
and whose output is read by one QuantizeLinear alone becomes its quantized op reading the 8-bit
tensors and writing the QuantizeLinear's output:

  Conv -> QLinearConv (ai.onnx; bias the int32 tensor under its DequantizeLinear, or a float
          bias quantized as the quantizer does: rint(b / (x_scale w_scale)) per channel),
  Gemm -> com.microsoft QGemm (C the int32 bias; float output when nothing quantizes it),
  Add -> QLinearAdd, Mul -> QLinearMul, Sigmoid -> QLinearSigmoid,
  LeakyRelu -> QLinearLeakyRelu, GlobalAveragePool -> QLinearGlobalAveragePool,
  AveragePool -> QLinearAveragePool, Concat -> QLinearConcat (com.microsoft),
  MaxPool, Flatten, Reshape, Identity, Transpose, Squeeze, Unsqueeze with input and output of
  the same parameters -> the op itself on the 8-bit tensor;

then DequantizeLinear / QuantizeLinear (and Identity) nodes nobody reads are dropped (the graph input's
QuantizeLinear and the output's DequantizeLinear stay).

usage: /usr/bin/python3 bench/qdq_to_qop.py IN.onnx OUT.onnx
"""
import collections
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

MS = 'com.microsoft'
MS_OPS = {'Add': 'QLinearAdd', 'Mul': 'QLinearMul', 'Sigmoid': 'QLinearSigmoid',
          'LeakyRelu': 'QLinearLeakyRelu', 'GlobalAveragePool': 'QLinearGlobalAveragePool',
          'AveragePool': 'QLinearAveragePool', 'Concat': 'QLinearConcat'}
DIRECT = {'MaxPool', 'Flatten', 'Reshape', 'Identity', 'Transpose', 'Squeeze', 'Unsqueeze'}


def convert(m):
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    prod = {o: n for n in g.node for o in n.output}
    cons = collections.defaultdict(list)
    for n in g.node:
        for i in n.input:
            cons[i].append(n)
    outs = {o.name for o in g.output}

    def dq(name):  # the DequantizeLinear behind name (through Identity nodes)
        n = prod.get(name)
        while n is not None and n.op_type == 'Identity':
            n = prod.get(n.input[0])
        return n if n is not None and n.op_type == 'DequantizeLinear' else None

    def only_q(name):
        c = cons[name]
        if name in outs or len(c) != 1 or c[0].op_type != 'QuantizeLinear':
            return None
        return c[0]

    def same_params(a, b):
        va = [numpy_helper.to_array(inits[x]) for x in a.input[1:3]]
        vb = [numpy_helper.to_array(inits[x]) for x in b.input[1:3]]
        return all(np.array_equal(x, y) for x, y in zip(va, vb))

    def int32_bias(name, ds):  # a float bias (through Identity) as the quantizer stores it
        while name in prod and prod[name].op_type == 'Identity':
            name = prod[name].input[0]
        if name not in inits:
            return None
        b = numpy_helper.to_array(inits[name]).astype(np.float64)
        xs = numpy_helper.to_array(inits[ds[0].input[1]]).astype(np.float64)
        ws = numpy_helper.to_array(inits[ds[1].input[1]]).astype(np.float64)
        q = np.rint(b / (xs * ws)).astype(np.int32)
        t = numpy_helper.from_array(q, name + '_int32_%d' % len(g.initializer))
        g.initializer.append(t)
        inits[t.name] = t
        return t.name

    new = {}  # id(old node) -> replacement (or None: dropped)
    counts = collections.Counter()
    for n in g.node:
        op = n.op_type
        data = [i for i in n.input if i]
        if op == 'Conv' or op == 'Gemm' or op in MS_OPS or op in DIRECT:
            nq = 2 if op in ('Conv', 'Gemm') else 1
            if op in ('Add', 'Mul'):
                nq = 2
            if op == 'Concat':
                nq = len(data)
            ds = [dq(i) for i in data[:nq]]
            if any(d is None for d in ds):
                continue
            q = only_q(n.output[0])
            if q is None and op != 'Gemm':
                continue
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            x = [list(d.input[:3]) for d in ds]
            y = list(q.input[1:3]) if q is not None else []
            out = q.output[0] if q is not None else n.output[0]
            if op in DIRECT:
                if not same_params(ds[0], q):
                    continue
                r = helper.make_node(op, [ds[0].input[0]] + data[1:], [out], n.name, **attrs)
            elif op == 'Conv':
                bias = []
                if len(data) > 2:
                    db = dq(data[2])
                    bias = [db.input[0] if db is not None else int32_bias(data[2], ds)]
                    if bias[0] is None:
                        continue
                r = helper.make_node('QLinearConv', x[0] + x[1] + y + bias, [out], n.name,
                                     **attrs)
            elif op == 'Gemm':
                if attrs.pop('beta', 1.0) != 1.0:
                    continue
                c = []
                if len(data) > 2:
                    db = dq(data[2])
                    if db is None:
                        continue
                    c = [db.input[0]]
                ins = x[0] + x[1] + (c if c or y else []) + y
                if not c and y:
                    ins[6:6] = ['']
                r = helper.make_node('QGemm', ins, [out], n.name, domain=MS, **attrs)
            elif op == 'Concat':
                ins = y + [i for t in x for i in t]
                r = helper.make_node('QLinearConcat', ins, [out], n.name, domain=MS, **attrs)
            elif op in ('Add', 'Mul'):
                r = helper.make_node(MS_OPS[op], x[0] + x[1] + y, [out], n.name, domain=MS,
                                     **attrs)
            else:
                r = helper.make_node(MS_OPS[op], x[0] + y, [out], n.name, domain=MS, **attrs)
            new[id(n)] = r
            if q is not None:
                new[id(q)] = None
            counts[r.op_type] += 1
    nodes = []
    for n in g.node:
        if id(n) in new:
            if new[id(n)] is not None:
                nodes.append(new[id(n)])
        else:
            nodes.append(n)
    while True:  # quantizers (and Identity nodes) nobody reads any more
        read = {i for n in nodes for i in n.input} | outs
        keep = [n for n in nodes
                if n.op_type not in ('QuantizeLinear', 'DequantizeLinear', 'Identity')
                or any(o in read for o in n.output)]
        if len(keep) == len(nodes):
            break
        nodes = keep
    del g.node[:]
    g.node.extend(nodes)
    read = {i for n in nodes for i in n.input}
    keep_init = [t for t in g.initializer if t.name in read]
    del g.initializer[:]
    g.initializer.extend(keep_init)
    if not any(o.domain == MS for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid(MS, 1))
    del g.value_info[:]
    return counts


def main():
    m = onnx.load(sys.argv[1])
    counts = convert(m)
    onnx.save(m, sys.argv[2])
    print(dict(counts))
    print(dict(collections.Counter(n.op_type for n in m.graph.node)))


if __name__ == '__main__':
    main()
