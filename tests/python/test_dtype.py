"""test_dtype.py — simplify(dtype=...) and `python3 -m omopt simplify --dtype/--check` against
the omopt command (the same bytes, the same kept nodes) and against the float32 model."""
import os
import subprocess
import sys

import numpy as np
import pytest

import omopt

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('OMOPT_BUILD', os.path.join(SRC, 'build'))
OMOPT = os.path.join(BUILD, 'tools', 'omopt')


def model(path):
    """y = Relu(MatMul(x, W[64,128])); p = Exp(20 x) / ReduceSum(Exp(20 x)): the Exp
    overflows float16."""
    onnx = pytest.importorskip('onnx')
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
    w = np.random.default_rng(0).standard_normal((64, 128)).astype(np.float32) / 8
    g = h.make_graph(
        [h.make_node('MatMul', ['x', 'W'], ['h'], name='mm'),
         h.make_node('Relu', ['h'], ['y'], name='relu'),
         h.make_node('Mul', ['x', 'c20'], ['xs'], name='scale'),
         h.make_node('Exp', ['xs'], ['ex'], name='exp'),
         h.make_node('ReduceSum', ['ex', 'axes'], ['den'], name='sum', keepdims=1),
         h.make_node('Div', ['ex', 'den'], ['p'], name='div')],
        'g', [h.make_tensor_value_info('x', T.FLOAT, ['N', 64])],
        [h.make_tensor_value_info('y', T.FLOAT, ['N', 128]),
         h.make_tensor_value_info('p', T.FLOAT, ['N', 64])],
        [nh.from_array(w, 'W'), nh.from_array(np.array(20, np.float32), 'c20'),
         nh.from_array(np.array([1], np.int64), 'axes')])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), path)
    return path


def test_dtype_fp16(tmp_path):
    onnx = pytest.importorskip('onnx')
    src = model(str(tmp_path / 'm.onnx'))
    kept = []
    out = omopt.simplify(onnx.load(src), dtype='fp16', check=2, dtype_report=kept)
    init = {i.name: i for i in out.graph.initializer}
    assert init['W'].data_type == onnx.TensorProto.FLOAT16
    assert [o.type.tensor_type.elem_type for o in out.graph.output] == [1, 1]
    assert out.graph.input[0].type.tensor_type.elem_type == 1
    why = {k[0]: k[2] for k in kept}
    assert why['exp'] == 'overflow' and why['sum'] == 'input beyond the half range'
    assert 'mm' not in why and 'relu' not in why
    assert 0.45 < len(out.SerializeToString()) / os.path.getsize(src) < 0.56
    # within 1e-2 of float32 (tensor-scale relative), and not bit-equal
    x = np.random.default_rng(3).standard_normal((5, 64)).astype(np.float32)
    want = omopt.InferenceSession(src, optimize=False).run(None, {'x': x})
    got = omopt.InferenceSession(out, optimize=False).run(None, {'x': x})
    for w, g in zip(want, got):
        rel = np.abs(w - g).max() / np.abs(w).max()
        assert 0 < rel < 1e-2
    # the command writes the same bytes; python3 -m omopt too, and prints the kept nodes
    cli = tmp_path / 'cli.onnx'
    r = subprocess.run([OMOPT, 'simplify', src, str(cli), '--dtype', 'fp16', '--check', '2'],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 'kept in float32: exp (Exp): overflow' in r.stderr
    assert omopt.simplify(src, dtype='fp16', check=2) == cli.read_bytes()
    mod = tmp_path / 'mod.onnx'
    r = subprocess.run([sys.executable, '-m', 'omopt', 'simplify', src, str(mod), '--dtype',
                        'fp16', '--check', '2'], capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    assert 'kept in float32: exp (Exp): overflow' in r.stderr
    assert mod.read_bytes() == cli.read_bytes()


def test_dtype_options_and_errors(tmp_path):
    onnx = pytest.importorskip('onnx')
    src = model(str(tmp_path / 'm.onnx'))
    kept = []
    out = omopt.simplify(src, dtype='bf16', keep_fp32=['relu'], dtype_report=kept)
    m = onnx.load_from_string(out)
    assert {i.name: i.data_type for i in m.graph.initializer}['W'] == onnx.TensorProto.BFLOAT16
    assert ('relu', 'Relu', 'asked') in [k[:3] for k in kept]
    # without measuring, the Exp is converted too (and the CLI writes the same bytes)
    nm = []
    raw = omopt.simplify(src, dtype='fp16', dtype_measure=False, dtype_report=nm)
    assert nm == []
    r = subprocess.run([OMOPT, 'simplify', src, str(tmp_path / 'nm.onnx'), '--dtype', 'fp16',
                        '--no-keep-measure'], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / 'nm.onnx').read_bytes() == raw
    r = subprocess.run([sys.executable, '-m', 'omopt', 'simplify', src, str(tmp_path / 'p.onnx'),
                        '--dtype', 'fp16', '--no-keep-measure'], capture_output=True,
                       env=os.environ)
    assert r.returncode == 0 and (tmp_path / 'p.onnx').read_bytes() == raw
    with pytest.raises(ValueError, match='fp16, bf16 or fp32'):
        omopt.simplify(src, dtype='fp8')
    # python3 -m omopt: --check with --input passes (exit 0); a tolerance float16 cannot meet
    # keeps every node float32, as the command does
    np.save(tmp_path / 'x.npy', np.ones((2, 64), np.float32))
    r = subprocess.run([sys.executable, '-m', 'omopt', 'simplify', src, str(tmp_path / 'o.onnx'),
                        '--check', '1', '--input', f'x={tmp_path / "x.npy"}', '--rtol', '1e-4'],
                       capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    for cmd in ([OMOPT], [sys.executable, '-m', 'omopt']):
        r = subprocess.run(cmd + ['simplify', src, str(tmp_path / 'o.onnx'), '--dtype', 'fp16',
                                  '--rtol', '1e-9', '--atol', '1e-12'],
                           capture_output=True, text=True, env=os.environ)
        assert r.returncode == 0, r.stderr
        # even W alone in float16 is beyond 1e-9: mm keeps its weights float32 too
        assert 'kept in float32: mm (MatMul): its weights in half' in r.stderr


def test_dtype_fp32_back_from_half(tmp_path):
    """dtype='fp32' (issue 36): a float32 model made float16 and widened again computes in
    float32 (no float16 initializer left) and gives the original's outputs within float16's
    rounding; omopt.onnxslim passes dtype 'fp32' through."""
    onnx = pytest.importorskip('onnx')
    src = os.path.join(SRC, 'tests', 'widen', 'model_fp32.onnx')
    half = omopt.simplify(src, dtype='fp16', dtype_measure=False)
    back = onnx.load_from_string(omopt.simplify(half, dtype='fp32'))
    assert all(i.data_type == onnx.TensorProto.FLOAT for i in back.graph.initializer)
    assert not [n for n in back.graph.node if n.op_type == 'Cast']
    x = np.random.default_rng(1).uniform(-2, 2, (2, 8)).astype(np.float32)
    [want] = omopt.InferenceSession(src).run(None, {'X': x})
    [got] = omopt.InferenceSession(back.SerializeToString()).run(None, {'X': x})
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-3)
    from omopt import onnxslim
    slim = onnxslim.slim(onnx.load_from_string(half), dtype='fp32')
    assert all(i.data_type == onnx.TensorProto.FLOAT for i in slim.graph.initializer)
