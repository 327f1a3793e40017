"""Writes the models with model-local functions that tests/test_simplify_options.c inlines
(tests/functions/). Run with /usr/bin/python3 (onnx; torch for torch_blocks) from the source
root: python3 tests/gen_functions.py. The files are committed; the tests do not run this.

  attrs.onnx   custom.ScaleAdd(X, Y; alpha, beta=0.5) = X*alpha + Y + beta, called twice
               (once with beta given), a caller value named like a body value ('t'), one
               function never called
  nested.onnx  custom.Outer(X) = custom.Inner(X) + X, Inner(X) = X*X; custom.Both(A) = (A, -A):
               a formal output that is a formal input
  branch.onnx  custom.Sel(C, X; k) = If(C, X + k, X - X): an If whose branches read the
               function's input X and its attribute k
  recursive.onnx  custom.F(X) = custom.G(X), G(X) = F(X): not inlinable (InvalidModel)
  torch_blocks/model.onnx, x.npy, y.npy: a PyTorch export with export_modules_as_functions
               (two residual LayerNorm-Linear-GELU blocks, LayerNorm a function too), its
               input and PyTorch's output
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper as h

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'functions')
OPSET = [h.make_opsetid('', 15), h.make_opsetid('custom', 1)]


def ref_attr(name, ref, kind):
    a = onnx.AttributeProto()
    a.name, a.ref_attr_name, a.type = name, ref, kind
    return a


def const_from(out, ref):
    n = h.make_node('Constant', [], [out])
    n.attribute.append(ref_attr('value_float', ref, onnx.AttributeProto.FLOAT))
    return n


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):
    """A length-delimited protobuf field."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def save(model, name, extra_functions=()):
    """extra_functions: (FunctionProto, [AttributeProto defaults]) appended to the file as raw
    ModelProto.functions (field 25) with FunctionProto.attribute_proto (field 11), which the
    onnx package of Debian 12 (1.12) does not know."""
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    for f, defaults in extra_functions:
        fb = f.SerializeToString() + b''.join(field(11, a.SerializeToString())
                                              for a in defaults)
        data += field(25, fb)
    with open(os.path.join(HERE, name), 'wb') as out:
        out.write(data)


def attrs():
    f = h.make_function('custom', 'ScaleAdd', ['X', 'Y'], ['Z'], [
        const_from('t', 'alpha'),
        h.make_node('Mul', ['X', 't'], ['u']),
        const_from('b', 'beta'),
        h.make_node('Add', ['u', 'Y'], ['v']),
        h.make_node('Add', ['v', 'b'], ['Z']),
    ], OPSET[:1], ['alpha'])
    unused = h.make_function('custom', 'Unused', ['X'], ['Y'],
                             [h.make_node('Neg', ['X'], ['Y'])], OPSET[:1])
    x = h.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 4])
    y = h.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 4])
    g = h.make_graph([
        h.make_node('Relu', ['x'], ['t'], name='relu'),
        h.make_node('ScaleAdd', ['t', 'y'], ['z1'], name='call1', domain='custom', alpha=2.0),
        h.make_node('ScaleAdd', ['z1', 'x'], ['z2'], name='call2', domain='custom',
                    alpha=-1.0, beta=3.0),
    ], 'attrs', [x, y], [h.make_tensor_value_info('z1', TensorProto.FLOAT, ['N', 4]),
                         h.make_tensor_value_info('z2', TensorProto.FLOAT, ['N', 4])])
    save(h.make_model(g, opset_imports=OPSET, functions=[unused], ir_version=8), 'attrs.onnx',
         [(f, [h.make_attribute('beta', 0.5)])])


def nested():
    inner = h.make_function('custom', 'Inner', ['X'], ['Y'],
                            [h.make_node('Mul', ['X', 'X'], ['Y'])], OPSET[:1])
    outer = h.make_function('custom', 'Outer', ['X'], ['Y'], [
        h.make_node('Inner', ['X'], ['h'], domain='custom'),
        h.make_node('Add', ['h', 'X'], ['Y']),
    ], OPSET)
    both = h.make_function('custom', 'Both', ['A'], ['A', 'B'],
                           [h.make_node('Neg', ['A'], ['B'])], OPSET[:1])
    x = h.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 3])
    g = h.make_graph([
        h.make_node('Outer', ['x'], ['o'], domain='custom'),  # no name: prefix 'Outer'
        h.make_node('Both', ['o'], ['p', 'q'], name='both', domain='custom'),
        h.make_node('Add', ['p', 'q'], ['s']),
        h.make_node('Sub', ['p', 'q'], ['d']),
    ], 'nested', [x], [h.make_tensor_value_info('s', TensorProto.FLOAT, ['N', 3]),
                       h.make_tensor_value_info('d', TensorProto.FLOAT, ['N', 3])])
    save(h.make_model(g, opset_imports=OPSET, functions=[outer, inner, both], ir_version=8),
         'nested.onnx')


def branch():
    then_g = h.make_graph([const_from('kk', 'k'), h.make_node('Add', ['X', 'kk'], ['r1'])],
                          'then', [], [h.make_tensor_value_info('r1', TensorProto.FLOAT, None)])
    else_g = h.make_graph([h.make_node('Sub', ['X', 'X'], ['r2'])], 'else', [],
                          [h.make_tensor_value_info('r2', TensorProto.FLOAT, None)])
    sel = h.make_function('custom', 'Sel', ['C', 'X'], ['Y'], [
        h.make_node('If', ['C'], ['Y'], then_branch=then_g, else_branch=else_g),
    ], OPSET[:1], ['k'])
    c = h.make_tensor_value_info('c', TensorProto.BOOL, [])
    x = h.make_tensor_value_info('x', TensorProto.FLOAT, ['N'])
    g = h.make_graph([
        h.make_node('Sel', ['c', 'x'], ['y'], name='sel', domain='custom', k=10.0),
    ], 'branch', [c, x], [h.make_tensor_value_info('y', TensorProto.FLOAT, ['N'])])
    save(h.make_model(g, opset_imports=OPSET, functions=[sel], ir_version=8), 'branch.onnx')


def recursive():
    f = h.make_function('custom', 'F', ['X'], ['Y'],
                        [h.make_node('G', ['X'], ['Y'], domain='custom')], OPSET)
    g_ = h.make_function('custom', 'G', ['X'], ['Y'],
                         [h.make_node('F', ['X'], ['Y'], domain='custom')], OPSET)
    x = h.make_tensor_value_info('x', TensorProto.FLOAT, [2])
    g = h.make_graph([h.make_node('F', ['x'], ['y'], domain='custom')], 'recursive', [x],
                     [h.make_tensor_value_info('y', TensorProto.FLOAT, [2])])
    model = h.make_model(g, opset_imports=OPSET, functions=[f, g_], ir_version=8)
    with open(os.path.join(HERE, 'recursive.onnx'), 'wb') as out:  # the checker rejects it
        out.write(model.SerializeToString())


def torch_blocks():
    try:
        import torch
    except ImportError:
        print('torch missing: torch_blocks not written')
        return

    class Block(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.ln, self.fc, self.act = (torch.nn.LayerNorm(c), torch.nn.Linear(c, c),
                                          torch.nn.GELU())

        def forward(self, x):
            return x + self.act(self.fc(self.ln(x)))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.b1, self.b2, self.head = Block(16), Block(16), torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.head(self.b2(self.b1(x)).mean(1))

    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(2, 5, 16)
    d = os.path.join(HERE, 'torch_blocks')
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(net, x, os.path.join(d, 'model.onnx'), input_names=['x'],
                      output_names=['y'], dynamic_axes={'x': {0: 'N', 1: 'T'}, 'y': {0: 'N'}},
                      opset_version=15, export_modules_as_functions={Block, torch.nn.LayerNorm})
    np.save(os.path.join(d, 'x.npy'), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(d, 'y.npy'), net(x).numpy())


if __name__ == '__main__':
    os.makedirs(HERE, exist_ok=True)
    attrs()
    nested()
    branch()
    recursive()
    torch_blocks()
