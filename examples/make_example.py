#!/usr/bin/python3
"""Builds examples/tiny_shuffle.onnx: a small model with the patterns omopt simplify targets.

A conv stem with a dynamic batch, then a channel shuffle written the way PyTorch exports it
(Shape -> Gather -> Unsqueeze -> Concat -> Reshape, twice), a Transpose pair that cancels, an
Identity, a Constant node and a dead branch. Weights are random with a fixed seed.
Run with Debian's python3-onnx: /usr/bin/python3 examples/make_example.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
C, H, W = 8, 16, 16
nodes, inits = [], []


def init(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name


def node(op, ins, outs, **attrs):
    nodes.append(helper.make_node(op, ins, outs, name=outs[0] + '_' + op.lower(), **attrs))
    return outs[0]


def const_i64(name, vals):
    return node('Constant', [], [name], value=numpy_helper.from_array(np.array(vals, np.int64)))


x = 'image'
y = node('Conv', [x, init('w0', rng.standard_normal((C, 3, 3, 3), np.float32) * 0.2),
                  init('b0', np.zeros(C, np.float32))], ['stem'], pads=[1, 1, 1, 1])
y = node('Relu', [y], ['stem_relu'])
y = node('Identity', [y], ['stem_id'])


def shuffle(t, groups, tag):
    """x.view(n, g, c/g, h, w).transpose(1, 2).reshape(n, c, h, w) as torch exports it."""
    s = node('Shape', [t], [tag + '_shape'])
    dims = []
    for i, d in enumerate(['n', 'c', 'h', 'w']):
        g = node('Gather', [s, const_i64(f'{tag}_i{i}', i)], [f'{tag}_{d}'], axis=0)
        dims.append(node('Unsqueeze', [g, init(f'{tag}_ax{i}', np.array([0], np.int64))],
                         [f'{tag}_{d}_u']))
    cg = node('Div', [dims[1], init(tag + '_g', np.array([groups], np.int64))], [tag + '_cg'])
    tgt = node('Concat', [dims[0], init(tag + '_gv', np.array([groups], np.int64)), cg,
                          dims[2], dims[3]], [tag + '_target5'], axis=0)
    v = node('Reshape', [t, tgt], [tag + '_5d'])
    v = node('Transpose', [v], [tag + '_tr'], perm=[0, 2, 1, 3, 4])
    tgt4 = node('Concat', [dims[0], dims[1], dims[2], dims[3]], [tag + '_target4'], axis=0)
    return node('Reshape', [v, tgt4], [tag + '_out'])


y = shuffle(y, 2, 'sh1')
y = node('Conv', [y, init('w1', rng.standard_normal((C, 1, 3, 3), np.float32) * 0.3)],
         ['dw'], pads=[1, 1, 1, 1], group=C)
y = shuffle(y, 4, 'sh2')
# a Transpose pair that cancels (NCHW -> NHWC -> NCHW)
y = node('Transpose', [y], ['nhwc'], perm=[0, 2, 3, 1])
y = node('Transpose', [y], ['nchw'], perm=[0, 3, 1, 2])
node('Sigmoid', [y], ['unused_branch'])  # dead: nothing reads it
y = node('GlobalAveragePool', [y], ['pool'])
y = node('Flatten', [y], ['flat'], axis=1)
y = node('Gemm', [y, init('fc_w', rng.standard_normal((10, C), np.float32) * 0.3),
                  init('fc_b', rng.standard_normal(10, np.float32) * 0.1)], ['logits'], transB=1)

graph = helper.make_graph(
    nodes, 'tiny_shuffle',
    [helper.make_tensor_value_info(x, TensorProto.FLOAT, ['batch', 3, H, W])],
    [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['batch', 10])],
    initializer=inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)],
                          producer_name='omopt examples/make_example.py')
model.ir_version = 7
onnx.checker.check_model(model)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tiny_shuffle.onnx')
onnx.save(model, out)
print('wrote %s: %d nodes' % (out, len(nodes)))
np.save(os.path.join(os.path.dirname(out), 'image.npy'),
        rng.standard_normal((2, 3, H, W)).astype(np.float32))
