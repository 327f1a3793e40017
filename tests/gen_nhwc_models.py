#!/usr/bin/python3
"""NHWC-exported CNNs for the push_transposes pass, written as model folders (model.onnx and
in/NAME.npy, the layout of ../shared/models) into OUTDIR. Not committed: generated.

usage: gen_nhwc_models.py OUTDIR

As tf2onnx and tflite2onnx export them: the graph input is NHWC, every layout-sensitive op
(Conv, pooling, BatchNormalization, Resize) reads Transpose(x, NHWC->NCHW) and is followed by
Transpose(y, NCHW->NHWC), and the ops between run on NHWC tensors (per-channel constants of
shape [C] on the last axis, Concat on axis 3, Reduce over axes 1, 2).

- nhwc_block:   a hand-built net: Conv/Relu/Add residual, per-channel Mul/Add, Clip, Concat, Pad,
                MaxPool, Sigmoid gating, ReduceMean + Softmax head.
- resnet18_nhwc, mobilenet_v2_nhwc: torchvision's (random weights, eval mode) exported by
                torch.onnx and then rewritten to NHWC as above (every rank-4 activation is
                stored NHWC; Flatten and other layout-unaware non-elementwise ops read it back
                through a Transpose).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TO_NCHW = [0, 3, 1, 2]
TO_NHWC = [0, 2, 3, 1]
LAYOUT_OPS = {'Conv', 'MaxPool', 'AveragePool', 'GlobalAveragePool', 'GlobalMaxPool',
              'BatchNormalization', 'Resize', 'ConvTranspose'}
ELEMENTWISE = {'Relu', 'Clip', 'Add', 'Mul', 'Sub', 'Div', 'Sigmoid', 'HardSigmoid',
               'HardSwish', 'Tanh', 'LeakyRelu', 'Identity'}


def save(outdir, name, model, inputs):
    d = os.path.join(outdir, name)
    os.makedirs(os.path.join(d, 'in'), exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, 'model.onnx'))
    for k, v in inputs.items():
        np.save(os.path.join(d, 'in', k + '.npy'), v)


def conv_w(rng, m, c, k):
    return (rng.standard_normal((m, c, k, k)) * np.sqrt(2.0 / (c * k * k))).astype(np.float32)


def nhwc_block():
    rng = np.random.default_rng(37)
    nodes, inits = [], []
    cnt = [0]

    def name(p):
        cnt[0] += 1
        return '%s_%d' % (p, cnt[0])

    def init(arr, p):
        n = name(p)
        inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def node(op, ins, **attrs):
        out = name(op.lower())
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def wrapped(op, x, extra=(), **attrs):
        t = node('Transpose', [x], perm=TO_NCHW)
        y = node(op, [t] + list(extra), **attrs)
        return node('Transpose', [y], perm=TO_NHWC)

    def conv(x, c, m, k=3, pad=True):
        w = init(conv_w(rng, m, c, k), 'w')
        b = init((rng.standard_normal(m) * 0.1).astype(np.float32), 'b')
        return wrapped('Conv', x, [w, b], pads=[k // 2 if pad else 0] * 4)

    x = 'x'
    h = conv(x, 3, 16)
    h = node('Relu', [h])
    s = init((1 + 0.1 * rng.standard_normal(16)).astype(np.float32), 'scale')
    o = init((0.1 * rng.standard_normal(16)).astype(np.float32), 'shift')
    h = node('Add', [node('Mul', [h, s]), o])
    r = conv(node('Relu', [conv(h, 16, 16)]), 16, 16)
    h = node('Relu', [node('Add', [h, r])])
    lo, hi = init(np.float32(0), 'lo'), init(np.float32(6), 'hi')
    a = node('Clip', [conv(h, 16, 8, 1), lo, hi])
    b = node('Sigmoid', [conv(h, 16, 8, 3)])
    h = node('Concat', [a, b], axis=3)
    h = wrapped('MaxPool', h, kernel_shape=[2, 2], strides=[2, 2])
    # tf2onnx's explicit SAME padding: an NHWC Pad before a VALID Conv
    pads = init(np.array([0, 1, 1, 0, 0, 1, 1, 0], dtype=np.int64), 'pads')
    h = node('Relu', [conv(node('Pad', [h, pads], mode='constant'), 16, 16, 3, pad=False)])
    g = node('Sigmoid', [conv(h, 16, 16, 1)])
    h = node('Mul', [h, g])
    h = node('ReduceMean', [h], axes=[1, 2], keepdims=0)
    w = init((rng.standard_normal((16, 10)) * 0.25).astype(np.float32), 'fc')
    y = node('Softmax', [node('MatMul', [h, w])], axis=-1)
    nodes[-1].output[0] = 'y'
    graph = helper.make_graph(
        nodes, 'nhwc_block',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 32, 32, 3])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 8
    return m, {'x': rng.standard_normal((2, 32, 32, 3)).astype(np.float32)}


def to_nhwc(model):
    """Rewrites a torch NCHW export to tf2onnx's NHWC form (see the module's text)."""
    g = model.graph
    from onnx import shape_inference
    inferred = shape_inference.infer_shapes(model)
    rank = {vi.name: len(vi.type.tensor_type.shape.dim)
            for vi in list(inferred.graph.value_info) + list(g.input) + list(g.output)}
    consts = {i.name for i in g.initializer}
    nhwc = set()  # rank-4 activations stored NHWC
    out_nodes = []
    k = [0]

    def fresh(p):
        k[0] += 1
        return '%s__t%d' % (p, k[0])

    def tr(x, perm):
        y = fresh(x)
        out_nodes.append(helper.make_node('Transpose', [x], [y], perm=perm))
        return y

    inp = g.input[0]
    old = inp.name
    dims = inp.type.tensor_type.shape.dim
    nhwc_in = helper.make_tensor_value_info(old + '_nhwc', TensorProto.FLOAT,
                                            [dims[0].dim_param or dims[0].dim_value,
                                             dims[2].dim_value, dims[3].dim_value,
                                             dims[1].dim_value])
    nhwc.add(old)
    rename = {old: old + '_nhwc'}
    for n in g.node:
        ins = [rename.get(i, i) for i in n.input]
        if n.op_type in LAYOUT_OPS:
            ins[0] = tr(ins[0], TO_NCHW) if n.input[0] in nhwc else ins[0]
            mid = fresh(n.output[0])
            out_nodes.append(helper.make_node(n.op_type, ins, [mid] + list(n.output[1:]),
                                              name=n.name, **{a.name: helper.get_attribute_value(a)
                                                              for a in n.attribute}))
            if rank.get(n.output[0]) == 4:
                out_nodes.append(helper.make_node('Transpose', [mid], [n.output[0]],
                                                  perm=TO_NHWC))
                nhwc.add(n.output[0])
            else:
                out_nodes.append(helper.make_node('Identity', [mid], [n.output[0]]))
            continue
        if n.op_type in ELEMENTWISE and any(i in nhwc for i in n.input):
            for j, i in enumerate(n.input):
                if i and i not in nhwc and rank.get(i, 0) == 4 and i not in consts:
                    ins[j] = tr(ins[j], TO_NHWC)
            out_nodes.append(helper.make_node(n.op_type, ins, list(n.output), name=n.name,
                                              **{a.name: helper.get_attribute_value(a)
                                                 for a in n.attribute}))
            nhwc.update(o for o in n.output if rank.get(o) == 4)
            continue
        for j, i in enumerate(n.input):
            if i in nhwc:
                ins[j] = tr(ins[j], TO_NCHW)
        out_nodes.append(helper.make_node(n.op_type, ins, list(n.output), name=n.name,
                                          **{a.name: helper.get_attribute_value(a)
                                             for a in n.attribute}))
    del g.node[:]
    g.node.extend(out_nodes)
    del g.input[:]
    g.input.extend([nhwc_in])
    del g.value_info[:]
    return model


def torchvision_nhwc(arch):
    import io
    import torch
    import torchvision
    torch.manual_seed(37)
    net = getattr(torchvision.models, arch)(weights=None).eval()
    x = torch.randn(1, 3, 64, 64)
    buf = io.BytesIO()
    torch.onnx.export(net, x, buf, opset_version=13, input_names=['x'], output_names=['y'],
                      dynamic_axes={'x': {0: 'N'}, 'y': {0: 'N'}})
    m = to_nhwc(onnx.load_from_string(buf.getvalue()))
    rng = np.random.default_rng(37)
    return m, {'x_nhwc': rng.standard_normal((2, 64, 64, 3)).astype(np.float32)}


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    out = argv[1]
    save(out, 'nhwc_block', *nhwc_block())
    for arch in ('resnet18', 'mobilenet_v2'):
        try:
            save(out, arch + '_nhwc', *torchvision_nhwc(arch))
        except ImportError as e:
            print('skipped %s: %s' % (arch, e), file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
