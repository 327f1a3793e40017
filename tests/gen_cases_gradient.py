#!/usr/bin/python3
"""Cases for ai.onnx.preview.training Gradient (passes/lower_gradient.c and the rows'
derivative rules), written to tests/cases/gradient/<case>/ in the backend-test layout. ONNX
Runtime's CPU build has no Gradient and ONNX 1.12 no reference for it, so the expected
gradients are the math: central finite differences of the forward function in float64 (the
gradient of sum(y), the spec's all-ones seed), each case's forward written here in numpy; for
the simple cases also a hand-derived gradient, which must agree with the differences within
1e-6 before anything is written. Models are double (the differences' error, about 1e-9 with
h = 1e-5 on these smooth functions, is far inside the runner's rtol 1e-3) except one float case.
usage: /usr/bin/python3 tests/gen_cases_gradient.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'cases', 'gradient')
TRAINING = 'ai.onnx.preview.training'
rng = np.random.default_rng(35)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def fd(f, xs, k, h=1e-5):
    """d sum(f(xs)) / d xs[k] by central differences, float64"""
    x = xs[k].astype(np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up = [v.astype(np.float64) for v in xs]
        dn = [v.astype(np.float64) for v in xs]
        up[k] = x.copy()
        dn[k] = x.copy()
        up[k][i] += h
        dn[k][i] -= h
        g[i] = (np.sum(f(*up)) - np.sum(f(*dn))) / (2 * h)
    return g


def write(name, nodes, inputs, f, xs, zs=(), inits=(), opset=17, dtype=np.float64,
          hand=None, shapes=None, y='y', at=None):
    """inputs: [(name, array)] fed to the model; xs, zs: names (inputs or intermediates) the
    Gradient differentiates by / holds; f: the forward function of the xs (and the zs, in
    that order) giving y; hand: hand-derived gradients of the xs, or None"""
    feed = dict(inputs)
    feed.update(at or {})
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    args = [feed[n] for n in list(xs) + list(zs)]
    y_val = f(*args)
    grads = [fd(f, args, k) for k in range(len(xs))]
    if hand is not None:
        for k, hg in enumerate(hand(*args)):
            hg = np.broadcast_to(hg, grads[k].shape)
            assert np.allclose(hg, grads[k], rtol=1e-6, atol=1e-6), (name, k, hg, grads[k])
    gnode = helper.make_node('Gradient', list(xs) + list(zs), ['d_' + x for x in xs],
                             domain=TRAINING, xs=list(xs), y=y, **({'zs': list(zs)} if zs else {}))
    shapes = shapes or {}
    g_in = [helper.make_tensor_value_info(n, elem, shapes.get(n, v.shape)) for n, v in inputs]
    g_out = [helper.make_tensor_value_info(y, elem, shapes.get(y, np.shape(y_val)))] + \
        [helper.make_tensor_value_info('d_' + x, elem, shapes.get(x, g.shape))
         for x, g in zip(xs, grads)]
    graph = helper.make_graph(nodes + [gnode], name, g_in, g_out, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset),
                                                    helper.make_opsetid(TRAINING, 1)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(model, os.path.join(d, 'model.onnx'))
    outs = [(y, y_val)] + [('d_' + x, gv) for x, gv in zip(xs, grads)]
    for i, (n, v) in enumerate(inputs):
        t = numpy_helper.from_array(np.asarray(v, dtype=dtype), n)
        open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i), 'wb').write(
            t.SerializeToString())
    for i, (n, v) in enumerate(outs):
        t = numpy_helper.from_array(np.asarray(v, dtype=dtype), n)
        open(os.path.join(d, 'test_data_set_0', 'output_%d.pb' % i), 'wb').write(
            t.SerializeToString())


def r(*shape, lo=-1.0, hi=1.0, dtype=np.float64):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def const(name, v):
    return numpy_helper.from_array(np.asarray(v), name)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    N = helper.make_node
    # (a + b) * a, a [3,1], b [1,4]: d/da = sum over the row of (2a + b), d/db = sum of a
    a, b = r(3, 1), r(1, 4)
    write('bcast_add_mul', [N('Add', ['a', 'b'], ['c']), N('Mul', ['c', 'a'], ['y'])],
          [('a', a), ('b', b)], lambda a, b: (a + b) * a, ['a', 'b'],
          hand=lambda a, b: [np.sum(2 * a + b, axis=1, keepdims=True),
                             np.sum(np.broadcast_to(a, (3, 4)), axis=0, keepdims=True)])
    # the same at opset 12 (ReduceSum's axes an attribute) and in float
    write('bcast_add_mul_opset12_float',
          [N('Add', ['a', 'b'], ['c']), N('Mul', ['c', 'a'], ['y'])],
          [('a', a.astype(np.float32)), ('b', b.astype(np.float32))],
          lambda a, b: (a + b) * a, ['a', 'b'], opset=12, dtype=np.float32)
    # MatMul A [2,3] @ B [3,4]: dA = 1 B^T, dB = A^T 1
    A, B = r(2, 3), r(3, 4)
    write('matmul', [N('MatMul', ['A', 'B'], ['y'])], [('A', A), ('B', B)],
          lambda A, B: A @ B, ['A', 'B'],
          hand=lambda A, B: [np.ones((2, 4)) @ B.T, A.T @ np.ones((2, 4))])
    # batched A [2,2,3] @ B [3,4] (B broadcast over the batch), then Tanh
    A3 = r(2, 2, 3)
    write('matmul_batch_tanh', [N('MatMul', ['A', 'B'], ['m']), N('Tanh', ['m'], ['y'])],
          [('A', A3), ('B', B)], lambda A, B: np.tanh(A @ B), ['A', 'B'])
    # unary chain on x > 0: Sqrt(Exp(x)) + Log(Sigmoid(x)) - Relu(x) * Neg(x)
    x = r(2, 3, lo=0.2, hi=1.5)
    write('unary_chain', [N('Exp', ['x'], ['e']), N('Sqrt', ['e'], ['s']),
                          N('Sigmoid', ['x'], ['g']), N('Log', ['g'], ['l']),
                          N('Relu', ['x'], ['u']), N('Neg', ['x'], ['n']),
                          N('Mul', ['u', 'n'], ['un']), N('Add', ['s', 'l'], ['sl']),
                          N('Sub', ['sl', 'un'], ['y'])],
          [('x', x)], lambda x: np.sqrt(np.exp(x)) + np.log(sigmoid(x)) + x * x, ['x'],
          hand=lambda x: [0.5 * np.sqrt(np.exp(x)) + (1 - sigmoid(x)) + 2 * x])
    # Relu where x < 0 too (no x within 0.05 of the kink)
    xr = r(3, 4)
    xr[np.abs(xr) < 0.05] = 0.5
    write('relu_tanh', [N('Relu', ['x'], ['u']), N('Tanh', ['u'], ['y'])], [('x', xr)],
          lambda x: np.tanh(np.maximum(x, 0)), ['x'])
    # (a - b) / b, a [2,3], b [3] (b > 0.5)
    a2, b2 = r(2, 3), r(3, lo=0.5, hi=2.0)
    write('sub_div', [N('Sub', ['a', 'b'], ['s']), N('Div', ['s', 'b'], ['y'])],
          [('a', a2), ('b', b2)], lambda a, b: (a - b) / b, ['a', 'b'],
          hand=lambda a, b: [np.ones((2, 3)) / b, np.sum(-a / (b * b), axis=0)])
    # Pow with a constant exponent (an initializer) 2.5, x > 0
    write('pow_const', [N('Pow', ['x', 'p'], ['y'])], [('x', x)], lambda x: x ** 2.5, ['x'],
          inits=[const('p', np.array(2.5))], hand=lambda x: [2.5 * x ** 1.5])
    # ReduceSum (axes input, keepdims 0) of x*x, then ReduceMean over the last axis
    x3 = r(2, 3, 4)
    write('reduce_sum_mean',
          [N('Mul', ['x', 'x'], ['q']), N('ReduceSum', ['q', 'ax'], ['s'], keepdims=0),
           N('ReduceMean', ['s'], ['y'], axes=[-1], keepdims=1)],
          [('x', x3)], lambda x: np.mean(np.sum(x * x, axis=1), axis=-1, keepdims=True), ['x'],
          inits=[const('ax', np.array([1], dtype=np.int64))],
          hand=lambda x: [2 * x / 4])
    # the same at opset 12: ReduceSum's axes an attribute; ReduceMean of every axis
    write('reduce_opset12',
          [N('Mul', ['x', 'x'], ['q']), N('ReduceSum', ['q'], ['s'], axes=[0, 2], keepdims=0),
           N('ReduceMean', ['s'], ['y'], keepdims=0)],
          [('x', x3)], lambda x: np.mean(np.sum(x * x, axis=(0, 2))), ['x'], opset=12)
    # Transpose, Reshape (to [4, 6]), MatMul by W [6,2], Sum with c [2], Identity
    W, c = r(6, 2), r(2)
    write('transpose_reshape_sum',
          [N('Transpose', ['x'], ['t'], perm=[2, 0, 1]), N('Reshape', ['t', 'shape'], ['rs']),
           N('MatMul', ['rs', 'W'], ['m']), N('Sum', ['m', 'c', 'm'], ['s']),
           N('Identity', ['s'], ['y'])],
          [('x', x3), ('W', W), ('c', c)],
          lambda x, W, c: 2 * (np.transpose(x, (2, 0, 1)).reshape(4, 6) @ W) + c,
          ['x', 'W', 'c'], inits=[const('shape', np.array([4, 6], dtype=np.int64))])
    # Transpose without perm (axes reversed)
    write('transpose_default', [N('Transpose', ['x'], ['t']), N('Mul', ['t', 'w'], ['y'])],
          [('x', x3), ('w', r(4, 3, 2))], lambda x, w: np.transpose(x) * w, ['x', 'w'])
    # zs, an x that y does not depend on (zeros), and y read twice
    write('zs_and_unreached', [N('Mul', ['a', 'z'], ['m']), N('Add', ['m', 'm'], ['y'])],
          [('a', a2), ('u', r(4)), ('z', r(2, 3))],
          lambda a, u, z: (a * z) * 2, ['a', 'u'], zs=['z'],
          hand=lambda a, u, z: [2 * z, np.zeros(4)])
    # an intermediate x: dy/dh with h = a * b (nothing differentiated past h)
    write('intermediate_x', [N('Mul', ['a', 'b'], ['h']), N('Exp', ['h'], ['y'])],
          [('a', a2), ('b', b2)], lambda h: np.exp(h), ['h'], at={'h': a2 * b2},
          hand=lambda h: [np.exp(h)])
    # a symbolic batch dim: a [N,3] + b [1,3], fed N = 2
    write('symbolic_bcast', [N('Add', ['a', 'b'], ['c']), N('Mul', ['c', 'c'], ['y'])],
          [('a', a2), ('b', r(1, 3))], lambda a, b: (a + b) ** 2, ['a', 'b'],
          shapes={'a': ['N', 3], 'y': ['N', 3]})


if __name__ == '__main__':
    main()
