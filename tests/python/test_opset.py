"""test_opset.py — simplify(opset=N) (om_opset_convert): the result's opset and converted node,
and a refused conversion raising Unsupported."""
import numpy as np
import pytest

import omopt


def squeeze11():
    onnx = pytest.importorskip('onnx')
    from onnx import TensorProto as T, helper as h
    g = h.make_graph([h.make_node('Squeeze', ['x'], ['y'], axes=[1], name='sq')], 'g',
                     [h.make_tensor_value_info('x', T.FLOAT, ['N', 1, 3])],
                     [h.make_tensor_value_info('y', T.FLOAT, ['N', 3])])
    return h.make_model(g, opset_imports=[h.make_opsetid('', 11)])


def test_opset_up():
    onnx = pytest.importorskip('onnx')
    from onnx import numpy_helper as nh
    out = omopt.simplify(squeeze11(), opset=13, check=2)
    assert [o.version for o in out.opset_import if o.domain in ('', 'ai.onnx')] == [13]
    sq = [n for n in out.graph.node if n.op_type == 'Squeeze']
    assert len(sq) == 1 and len(sq[0].input) == 2 and not sq[0].attribute
    axes = {i.name: nh.to_array(i) for i in out.graph.initializer}[sq[0].input[1]]
    assert axes.tolist() == [1]


def test_opset_refused():
    onnx = pytest.importorskip('onnx')
    from onnx import TensorProto as T, helper as h
    g = h.make_graph([h.make_node('Trilu', ['x'], ['y'], name='tri')], 'g',
                     [h.make_tensor_value_info('x', T.STRING, [2, 2])],
                     [h.make_tensor_value_info('y', T.STRING, [2, 2])])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 14)])
    with pytest.raises(omopt.Unsupported) as e:
        omopt.simplify(m, opset=13)
    assert 'tri' in str(e.value) and 'Trilu' in str(e.value)
