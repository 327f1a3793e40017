"""Static int8 quantization of a float model into QDQ format, as onnxruntime.quantization's
quantize_static(..., quant_format=QuantFormat.QDQ, per_channel=True) emits it with its defaults
(written from that quantizer's behaviour: there is no onnxruntime Python package here):

- pre-processing as quant_pre_process does: BatchNormalization after a Conv folded into it;
- MinMax calibration over the .npy samples of --calib (every tensor's min and max over all
  samples, widened to include 0);
- activations int8 asymmetric: scale = (rmax - rmin) / 255, zero point = round(-128 - rmin /
  scale); each quantized activation gets one QuantizeLinear -> DequantizeLinear pair that all its
  readers read (no dedicated pairs);
- weights int8 symmetric per channel (Conv: axis 0; Gemm: the output axis; MatMul: axis 1):
  scale = max|w| / 127, zero point 0, an int8 initializer read by a DequantizeLinear (axis);
- biases of Conv and Gemm: int32 round(b / (x_scale * w_scale)) through a DequantizeLinear of
  that scale (per channel) and zero point 0;
- Relu and Clip whose input is the output of a quantized Conv/Gemm/MatMul/Add/Mul read by them
  alone are removed, the op's output taking the activation's range (its name too);
- Add, Mul, AveragePool, GlobalAveragePool, Concat, Sigmoid, Softmax, Relu, Clip: inputs and
  output quantized with their own parameters; MaxPool, Reshape, Flatten, Transpose, Squeeze,
  Unsqueeze, Resize (ORT's 8-bit direct ops): input quantized, output with the input's
  parameters; every other op stays float (its inputs read DequantizeLinear outputs where they
  are quantized).

The intermediates are measured by running the model in ONNX Runtime through the oracle
(../shared/oracle/ort_run.js) with every float tensor made a graph output.

Run as /usr/bin/python3 bench/quantize.py static IN.onnx OUT.onnx --calib DIR_OF_NPY;
DIR holds samples: with one graph input every .npy file is a sample of it; with several, files
named INPUT.npy or INPUT_<k>.npy.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

from onnx_graph import inits, keep_initializers, set_nodes

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared'))
ORACLE = os.path.join(SHARED, 'oracle', 'ort_run.js')

WEIGHTED = {'Conv', 'Gemm', 'MatMul'}
OWN_PARAMS = {'Add', 'Mul', 'AveragePool', 'GlobalAveragePool', 'Concat', 'Sigmoid', 'Softmax',
              'Relu', 'Clip'}
DIRECT = {'MaxPool', 'Reshape', 'Flatten', 'Transpose', 'Squeeze', 'Unsqueeze', 'Resize'}
REMOVABLE = {'Relu', 'Clip'}
REMOVE_AFTER = WEIGHTED | {'Add', 'Mul'}


def fold_bn(m):
    """BatchNormalization reading a Conv's output alone folded into the Conv's weights."""
    g = m.graph
    ini = inits(g)
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    prod = {o: n for n in g.node for o in n.output}
    keep = []
    dead = set()
    for n in g.node:
        if n.op_type != 'BatchNormalization' or len(n.output) != 1:
            continue
        cv = prod.get(n.input[0])
        if (cv is None or cv.op_type != 'Conv' or len(readers.get(n.input[0], [])) != 1 or
                cv.input[1] not in ini or any(x not in ini for x in n.input[1:5])):
            continue
        sc, b, mean, var = (numpy_helper.to_array(ini[x]).astype(np.float64)
                            for x in n.input[1:5])
        eps = next((a.f for a in n.attribute if a.name == 'epsilon'), 1e-5)
        w = numpy_helper.to_array(ini[cv.input[1]]).astype(np.float64)
        cb = (numpy_helper.to_array(ini[cv.input[2]]).astype(np.float64)
              if len(cv.input) > 2 and cv.input[2] else np.zeros(w.shape[0]))
        f = sc / np.sqrt(var + eps)
        w = (w * f.reshape(-1, *([1] * (w.ndim - 1)))).astype(np.float32)
        cb = ((cb - mean) * f + b).astype(np.float32)
        wn, bn = cv.name + '_W_bn', cv.name + '_B_bn'
        g.initializer.extend([numpy_helper.from_array(w, wn), numpy_helper.from_array(cb, bn)])
        del cv.input[1:]
        cv.input.extend([wn, bn])
        cv.output[0] = n.output[0]
        dead.add(id(n))
    set_nodes(g, [n for n in g.node if id(n) not in dead])
    keep_initializers(g, {i for n in g.node for i in n.input} | {o.name for o in g.output})


def samples(g, d):
    names = [i.name for i in g.input if i.name not in inits(g)]
    files = sorted(glob.glob(os.path.join(d, '*.npy')))
    if len(names) == 1:
        return [{names[0]: f} for f in files]
    per = {n: sorted(f for f in files if os.path.basename(f)[:-4] == n or
                     os.path.basename(f).startswith(n + '_')) for n in names}
    k = min(len(v) for v in per.values())
    return [{n: per[n][i] for n in names} for i in range(k)]


def calibrate(m, calib):
    """min and max of every float tensor over the samples (ONNX Runtime through the oracle)"""
    g = m.graph
    ini = inits(g)
    typed = {v.name: v.type.tensor_type.elem_type
             for v in list(g.value_info) + list(g.output) + list(g.input)}
    names = []
    for n in g.node:
        for t in list(n.input) + list(n.output):
            if t and t not in ini and typed.get(t) == TensorProto.FLOAT and t not in names:
                names.append(t)
    aug = onnx.ModelProto()
    aug.CopyFrom(m)
    del aug.graph.output[:]
    aug.graph.output.extend(helper.make_tensor_value_info(t, TensorProto.FLOAT, None)
                            for t in names)
    ranges = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'aug.onnx')
        onnx.save(aug, path)
        for s in samples(g, calib):
            out = os.path.join(tmp, 'out')
            subprocess.run(['node', ORACLE, path, out] +
                           ['%s=%s' % kv for kv in s.items()] + ['--level', 'disabled'],
                           check=True, stdout=subprocess.DEVNULL)
            for i, t in enumerate(names):
                a = np.load(os.path.join(out, '%d.npy' % i))
                lo, hi = float(a.min(initial=0.0)), float(a.max(initial=0.0))
                if t in ranges:
                    lo, hi = min(lo, ranges[t][0]), max(hi, ranges[t][1])
                ranges[t] = (lo, hi)
    if not ranges:
        sys.exit('no calibration samples in %s' % calib)
    return ranges


def act_params(lo, hi):
    """int8 asymmetric scale and zero point of [lo, hi] (onnxruntime's compute_scale_zp)"""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0)
    if scale == 0:
        return np.float32(1.0), np.int8(0)
    zp = int(np.round(-128 - lo / np.float64(scale)))
    return scale, np.int8(max(-128, min(127, zp)))


class Quantizer:
    def __init__(self, m, ranges):
        self.m, self.g, self.ranges = m, m.graph, ranges
        self.ini = inits(self.g)
        self.params = {}    # tensor -> (scale, zp) of its QDQ pair
        self.new_nodes = {}  # node id -> nodes to put before it
        self.renames = {}   # tensor -> DequantizeLinear output
        self.extra = []

    def const(self, name, arr):
        self.g.initializer.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, n, slot, axis):
        w = numpy_helper.to_array(self.ini[n.input[slot]]).astype(np.float32)
        red = tuple(d for d in range(w.ndim) if d != axis)
        amax = np.abs(w).max(axis=red) if w.ndim > 1 else np.abs(w)
        s = (amax / 127.0).astype(np.float32)
        s[s == 0] = 1.0
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8)
        base = n.input[slot]
        qn = self.const(base + '_quantized', q)
        sn = self.const(base + '_scale', s)
        zn = self.const(base + '_zero_point', np.zeros(s.shape, np.int8))
        out = base + '_DequantizeLinear_Output'
        self.extra.append(helper.make_node('DequantizeLinear', [qn, sn, zn], [out],
                                           base + '_DequantizeLinear', axis=axis))
        n.input[slot] = out
        return s

    def bias(self, n, xs, ws):
        b = numpy_helper.to_array(self.ini[n.input[2]]).astype(np.float64)
        s = (np.float32(xs) * ws).astype(np.float32)
        q = np.clip(np.round(b / s.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
        base = n.input[2]
        qn = self.const(base + '_quantized', q)
        sn = self.const(base + '_scale', s)
        zn = self.const(base + '_zero_point', np.zeros(s.shape, np.int32))
        out = base + '_DequantizeLinear_Output'
        self.extra.append(helper.make_node('DequantizeLinear', [qn, sn, zn], [out],
                                           base + '_DequantizeLinear', axis=0))
        n.input[2] = out

    def want(self, t, same_as=None):
        if t in self.params or t in self.ini or t not in self.ranges:
            return t in self.params
        self.params[t] = self.params[same_as] if same_as else act_params(*self.ranges[t])
        return True

    def run(self):
        g = self.g
        readers = {}
        for n in g.node:
            for i in n.input:
                readers.setdefault(i, []).append(n)
        outputs = {o.name for o in g.output}
        prod = {o: n for n in g.node for o in n.output}
        removed = set()
        # removable activations: the op's output becomes the activation's
        for n in g.node:
            p = prod.get(n.input[0]) if n.input else None
            if (n.op_type in REMOVABLE and p is not None and p.op_type in REMOVE_AFTER and
                    len(readers.get(n.input[0], [])) == 1 and n.input[0] not in outputs and
                    len(p.output) == 1):
                p.output[0] = n.output[0]
                removed.add(id(n))
        nodes = [n for n in g.node if id(n) not in removed]
        for n in nodes:
            op = n.op_type
            if op in WEIGHTED:
                wslot = 1
                if n.input[wslot] not in self.ini or not self.want(n.input[0]):
                    continue
                trans_b = next((a.i for a in n.attribute if a.name == 'transB'), 0)
                axis = 0 if op == 'Conv' or (op == 'Gemm' and trans_b) else 1
                ws = self.weight(n, wslot, axis)
                if len(n.input) > 2 and n.input[2] in self.ini and op != 'MatMul':
                    self.bias(n, self.params[n.input[0]][0], ws)
                self.want(n.output[0])
            elif op in OWN_PARAMS:
                for i in n.input:
                    if i and i not in self.ini:
                        self.want(i)
                self.want(n.output[0])
            elif op in DIRECT:
                if self.want(n.input[0]):
                    self.want(n.output[0], same_as=n.input[0])
        # a QDQ pair after every quantized tensor; every reader reads the pair's output
        pairs = []
        for t, (s, z) in self.params.items():
            src = t
            dq_out = t + '_DequantizeLinear_Output'
            if t in outputs:  # the graph output keeps its name: the producer writes t_fp
                src = t + '_fp'
                for n in nodes:
                    n.output[:] = [src if o == t else o for o in n.output]
                dq_out = t
            sn = self.const(t + '_scale', np.float32(s))
            zn = self.const(t + '_zero_point', np.int8(z))
            qo = t + '_QuantizeLinear_Output'
            pairs.append((src, [helper.make_node('QuantizeLinear', [src, sn, zn], [qo],
                                                 t + '_QuantizeLinear'),
                                helper.make_node('DequantizeLinear', [qo, sn, zn], [dq_out],
                                                 t + '_DequantizeLinear')]))
            if t not in outputs:
                for n in nodes:
                    n.input[:] = [dq_out if i == t else i for i in n.input]
        order = []
        graph_inputs = [p for p in pairs if p[0] in {i.name for i in g.input}]
        for _, qd in graph_inputs:
            order += qd
        after = {}
        for src, qd in pairs:
            after.setdefault(src, []).extend(qd)
        order += self.extra
        for n in nodes:
            order.append(n)
            for o in n.output:
                order += after.get(o, [])
        set_nodes(g, order)
        keep_initializers(g, {i for n in g.node for i in n.input})


def static(src, dst, calib):
    m = onnx.load(src)
    if m.opset_import[0].version < 13:  # per-channel DequantizeLinear needs opset 13
        for o in m.opset_import:
            if o.domain in ('', 'ai.onnx'):
                o.version = 13
    fold_bn(m)
    m = onnx.shape_inference.infer_shapes(m)
    ranges = calibrate(m, calib)
    Quantizer(m, ranges).run()
    del m.graph.value_info[:]
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    q = sum(n.op_type == 'QuantizeLinear' for n in m.graph.node)
    print('%s: %d nodes, %d QuantizeLinear' % (dst, len(m.graph.node), q))
