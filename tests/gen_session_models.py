#!/usr/bin/python3
"""Writes the small models of tests/test_session_run.c into tests/session/:

  reshape_by_value.onnx  y = Reshape(x[4], s) with s a graph input (inference reads s's values)
  reshape_by_shape.onnx  y = Reshape(x + x, Concat(Shape(x), [1])) with x of symbolic extent n
  if_untaken.onnx        y = If(b) then Reshape(x[4], [3, 3]) (a shape error) else Identity(x)

    /usr/bin/python3 tests/gen_session_models.py
"""
import os
import onnx
from onnx import helper as h, TensorProto as T

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'session')
os.makedirs(OUT, exist_ok=True)


def save(g, name):
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), os.path.join(OUT, name))


x4 = h.make_tensor_value_info('x', T.FLOAT, [4])
y = h.make_tensor_value_info('y', T.FLOAT, None)
save(h.make_graph([h.make_node('Reshape', ['x', 's'], ['y'])], 'by_value',
                  [x4, h.make_tensor_value_info('s', T.INT64, [2])], [y]), 'reshape_by_value.onnx')
save(h.make_graph([h.make_node('Add', ['x', 'x'], ['a']), h.make_node('Shape', ['x'], ['sh']),
                   h.make_node('Concat', ['sh', 'one'], ['s'], axis=0),
                   h.make_node('Reshape', ['a', 's'], ['y'])], 'by_shape',
                  [h.make_tensor_value_info('x', T.FLOAT, ['n'])], [y],
                  [h.make_tensor('one', T.INT64, [1], [1])]), 'reshape_by_shape.onnx')
then = h.make_graph([h.make_node('Reshape', ['x', 'c'], ['y1'])], 'then', [],
                    [h.make_tensor_value_info('y1', T.FLOAT, None)],
                    [h.make_tensor('c', T.INT64, [2], [3, 3])])
els = h.make_graph([h.make_node('Identity', ['x'], ['y2'])], 'else', [],
                   [h.make_tensor_value_info('y2', T.FLOAT, None)])
save(h.make_graph([h.make_node('If', ['b'], ['y'], then_branch=then, else_branch=els)], 'untaken',
                  [x4, h.make_tensor_value_info('b', T.BOOL, [])], [y]), 'if_untaken.onnx')
