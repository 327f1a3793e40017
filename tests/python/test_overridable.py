"""test_overridable.py — overridable initializers (issue 35) through the Python package: a graph
input that has an initializer (IR >= 4) is listed by get_overridable_initializers, not by
get_inputs (as ONNX Runtime 1.30), may be fed in run()'s dict (checked like any input) and
takes its initializer's value when not fed. Values: ONNX Runtime's, in tests/overridable
(tests/gen_cases_overridable.py)."""
import os

import numpy as np
import pytest

import omopt
import omopt.onnxruntime as ort
from omopt.onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
CASE = os.path.join(SRC, 'tests', 'overridable')


def load(name):
    return np.load(os.path.join(CASE, name))


def check(got, prefix):
    for o, out in zip('yz', got):
        np.testing.assert_allclose(out, load(f'{prefix}_{o}.npy'), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('make', [omopt.InferenceSession, ort.InferenceSession])
def test_override(make):
    s = make(os.path.join(CASE, 'model.onnx'))
    assert [a.name for a in s.get_inputs()] == ['X']
    over = s.get_overridable_initializers()
    assert [(a.name, a.type, a.shape) for a in over] == [('W', 'tensor(float)', [3, 4]),
                                                         ('B', 'tensor(float)', [4])]
    x, w, b = load('x.npy'), load('w.npy'), load('b.npy')
    check(s.run(None, {'X': x}), 'default')
    check(s.run(None, {'X': x, 'W': w}), 'override_w')
    check(s.run(None, {'X': x, 'W': w, 'B': b}), 'override_wb')
    check(s.run(['Y', 'Z'], {'X': x}), 'default')  # nothing of a feed stays behind
    with pytest.raises(InvalidArgument, match="input 'W' has element type double"):
        s.run(None, {'X': x, 'W': w.astype(np.float64)})
    with pytest.raises(InvalidArgument, match="input 'W' has extent 4 on axis 0"):
        s.run(None, {'X': x, 'W': w.reshape(4, 3)})
    with pytest.raises(InvalidArgument, match="input 'B' has rank 2"):
        s.run(None, {'X': x, 'B': w})
    with pytest.raises(InvalidArgument, match=r"inputs not in the model: \['C'\]"):
        s.run(None, {'X': x, 'C': w})
    with pytest.raises(InvalidArgument, match=r"inputs not fed: \['X'\]"):
        s.run(None, {'W': w})


def test_ir3_none_overridable():
    """IR 3: every initializer is listed as an input; ONNX Runtime lists none of them and
    neither does omopt (they are constants): feeding one is an unknown input."""
    s = ort.InferenceSession(os.path.join(CASE, 'model_ir3.onnx'))
    assert [a.name for a in s.get_inputs()] == ['X']
    assert s.get_overridable_initializers() == []
    x = load('x.npy')
    check(s.run(None, {'X': x}), 'ir3')
    with pytest.raises(InvalidArgument, match=r"inputs not in the model: \['W'\]"):
        s.run(None, {'X': x, 'W': load('w.npy')})
