"""test_newuser.py — what a new user's scripts for onnxsim and onnxruntime found (issue 36, a
session trying the package as a user would): each test is such a script, with the value the
original tool gives asserted.

- onnxsim's overwrite_input_shapes changes a dim the model declares as a number (onnxsim sets
  dim_value whatever it was): shufflenet's 224 x 224 input run at 160 x 160;
- skipped_optimizers=['eliminate_deadend'] still folds (it skipped every fold before: the
  folded nodes stayed, the size rule gave the model back unchanged);
- tensor_size_threshold folds Constant nodes over the threshold into initializers (onnxsim's
  threshold is about Tile, ConstantOfShape and Expand outputs only);
- `python -m omopt.onnxsim ... --check-n 3`;
- OrtValue.element_type() is the ONNX type number; IOBinding's bind_input / bind_output with
  a CPU buffer_ptr, and bind_ortvalue_output, as ONNX Runtime binds preallocated memory;
- SessionOptions.add_free_dimension_override_by_name (was NotImplementedError);
- onnxsim.model_info.print_simplifying_info(model, model_simp) on ModelProtos, and
  onnxsim.__version__;
- unused_output keeps every graph input (silero lost its sr input: a script feeding it
  failed);
- omopt.onnxruntime.capi._pybind_state importable; a custom-domain op is InvalidGraph (as
  ONNX Runtime raises it) as well as NotImplemented;
- python -m omopt.onnxsim --input-data-path reads a .bin written by np.save (np.load, as
  onnxsim);
- a node failing on a run's values is also RuntimeException and Fail (ONNX Runtime's classes);
- omopt.onnxslim's warnings say omopt.onnxslim (they said omopt.onnxsim)."""
import ctypes
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import omopt.onnxruntime as ort
from omopt import onnxsim

onnx = pytest.importorskip('onnx')
from onnx import helper as h, numpy_helper, TensorProto as T  # noqa: E402

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(SRC, '..', 'shared'))


def shared_model(name):
    path = os.path.join(SHARED, 'models', name, 'model.onnx')
    if not os.path.isfile(path):
        pytest.skip(f'{path} is absent (../shared/models)')
    return path


def dims(vi):
    return [d.dim_value if d.HasField('dim_value') else d.dim_param
            for d in vi.type.tensor_type.shape.dim]


def model(nodes, ins, outs, inits=(), opset=13):
    return h.make_model(h.make_graph(nodes, 'g', ins, outs, list(inits)),
                        opset_imports=[h.make_opsetid('', opset)])


def test_overwrite_fixed_dim_small():
    # x declared [1, 2] -> Relu -> y [1, 2]; onnxsim's overwrite to [3, 2] gives [3, 2] out
    m = model([h.make_node('Relu', ['x'], ['y'])], [h.make_tensor_value_info('x', T.FLOAT, [1, 2])],
              [h.make_tensor_value_info('y', T.FLOAT, [1, 2])])
    s, ok = onnxsim.simplify(m, overwrite_input_shapes={'x': [3, 2]})
    assert ok
    assert dims(s.graph.input[0]) == [3, 2] and dims(s.graph.output[0]) == [3, 2]
    x = np.array([[1, -2], [-3, 4], [5, -6]], np.float32)
    [y] = ort.InferenceSession(s.SerializeToString()).run(None, {'x': x})
    assert y.tolist() == [[1, 0], [0, 4], [5, 0]]
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
        import omopt
        omopt.simplify(m, input_shapes={'x': [3, 2]})  # omopt's own API keeps declared dims


def test_overwrite_fixed_dim_shufflenet():
    path = shared_model('shufflenet')
    m = onnx.load(path)
    s, ok = onnxsim.simplify(m, overwrite_input_shapes={'image': [1, 3, 160, 160]}, check_n=1)
    assert ok
    assert dims(s.graph.input[0]) == [1, 3, 160, 160] and dims(s.graph.output[0]) == [1, 1000]
    # what onnxsim does: the input's dims set in the proto, then the model run as it is
    ref_model = onnx.load(path)
    for d, v in zip(ref_model.graph.input[0].type.tensor_type.shape.dim, [1, 3, 160, 160]):
        d.dim_value = v
    x = np.random.default_rng(1).random((1, 3, 160, 160), np.float32)
    [want] = ort.InferenceSession(ref_model.SerializeToString()).run(None, {'image': x})
    [got] = ort.InferenceSession(s.SerializeToString()).run(None, {'image': x})
    assert got.shape == (1, 1000)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def folding_model():
    # Constant c = [1, 2, 3] -> Mul(c, 2) -> Add(x, that): onnxsim folds the Mul
    c = h.make_node('Constant', [], ['c'], value=numpy_helper.from_array(
        np.array([1, 2, 3], np.float32)))
    two = numpy_helper.from_array(np.array(2, np.float32), 'two')
    return model([c, h.make_node('Mul', ['c', 'two'], ['d']), h.make_node('Add', ['x', 'd'], ['y'])],
                 [h.make_tensor_value_info('x', T.FLOAT, [3])],
                 [h.make_tensor_value_info('y', T.FLOAT, [3])], [two])


def test_skip_eliminate_deadend_still_folds():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        s, ok = onnxsim.simplify(folding_model(),
                                 skipped_optimizers=['fuse_bn_into_conv', 'eliminate_deadend'])
    assert ok
    assert [n.op_type for n in s.graph.node] == ['Add']
    assert any('eliminate_deadend' in str(x.message) for x in w)
    [y] = ort.InferenceSession(s.SerializeToString()).run(None, {'x': np.ones(3, np.float32)})
    assert y.tolist() == [3, 5, 7]


def test_tensor_size_threshold_folds_constant_nodes():
    # a Constant of 4096 floats (16 KiB) read by a Conv-free Add; threshold 10KB
    big = np.arange(4096, dtype=np.float32)
    c = h.make_node('Constant', [], ['c'], value=numpy_helper.from_array(big))
    m = model([c, h.make_node('Add', ['x', 'c'], ['y'])],
              [h.make_tensor_value_info('x', T.FLOAT, [4096])],
              [h.make_tensor_value_info('y', T.FLOAT, [4096])])
    s, ok = onnxsim.simplify(m, tensor_size_threshold='10KB')
    assert ok
    assert [n.op_type for n in s.graph.node] == ['Add']
    assert np.array_equal(numpy_helper.to_array(s.graph.initializer[0]), big)


def test_tensor_size_threshold_ppocr():
    m = onnx.load(shared_model('ppocr_det'))
    default, _ = onnxsim.simplify(m)
    s, ok = onnxsim.simplify(m, tensor_size_threshold='10KB')
    assert ok
    ops = [n.op_type for n in s.graph.node]
    assert 'Constant' not in ops  # 32 of them stayed before (over 10 KB)
    assert len(ops) == len(default.graph.node)  # 272: the BN fusions happen as by default


def test_cli_check_n_flag(tmp_path):
    path = shared_model('shufflenet')
    out = tmp_path / 's.onnx'
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxsim', path, str(out),
                        '--overwrite-input-shape', '1,3,224,224', '--skip-optimization',
                        'fuse_bn_into_conv', '--check-n', '3', '--no-large-tensor', '10KB'],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 'Finish! Here is the difference:' in r.stdout
    s = onnx.load(str(out))
    assert dims(s.graph.input[0]) == [1, 3, 224, 224]
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxsim', path, str(out), '2',
                        '--check-n', '3'], capture_output=True, text=True)
    assert r.returncode == 2 and '--check-n' in r.stderr


def relu_session():
    m = model([h.make_node('Relu', ['x'], ['y']), h.make_node('Cast', ['y'], ['z'], to=T.INT64)],
              [h.make_tensor_value_info('x', T.FLOAT, [2, 3])],
              [h.make_tensor_value_info('y', T.FLOAT, [2, 3]),
               h.make_tensor_value_info('z', T.INT64, [2, 3])])
    return ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])


def test_ortvalue_element_type():
    assert ort.OrtValue.ortvalue_from_numpy(np.zeros(2, np.float32)).element_type() == 1
    assert ort.OrtValue.ortvalue_from_numpy(np.zeros(2, np.int64)).element_type() == 7
    assert ort.OrtValue.ortvalue_from_numpy(np.zeros(2, np.float16)).element_type() == 10
    assert ort.OrtValue.ortvalue_from_numpy(np.array(['a'], object)).element_type() == 8


def test_iobinding_buffer_pointers():
    sess = relu_session()
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    y = np.full((2, 3), 9, np.float32)
    io = sess.io_binding()
    io.bind_input(name='x', device_type='cpu', device_id=0, element_type=np.float32,
                  shape=x.shape, buffer_ptr=x.ctypes.data)
    io.bind_output(name='y', device_type='cpu', device_id=0, element_type=np.float32,
                   shape=y.shape, buffer_ptr=y.ctypes.data)
    z = ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.int64, 'cpu', 0)
    io.bind_ortvalue_output('z', z)
    sess.run_with_iobinding(io)
    assert y.tolist() == [[1, 0, 3], [0, 5, 0]]          # written where bound
    assert z.numpy().tolist() == [[1, 0, 3], [0, 5, 0]]
    outs = io.copy_outputs_to_cpu()
    assert outs[0].tolist() == y.tolist() and outs[1].dtype == np.int64
    # a bound buffer of another shape is refused, as ONNX Runtime refuses it
    bad = np.zeros((3, 2), np.float32)
    io2 = sess.io_binding()
    io2.bind_cpu_input('x', x)
    io2.bind_output('y', 'cpu', 0, np.float32, bad.shape, bad.ctypes.data)
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
        sess.run_with_iobinding(io2)
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
        io2.bind_input('x', 'cuda', 0, np.float32, x.shape, x.ctypes.data)
    assert ctypes.sizeof(ctypes.c_float) == 4


def test_free_dimension_override():
    # x [batch, 3] -> ReduceSum over axis 1 (keepdims 0) -> y [batch]
    m = model([h.make_node('ReduceSum', ['x'], ['y'], keepdims=0, axes=[1])],
              [h.make_tensor_value_info('x', T.FLOAT, ['batch', 3])],
              [h.make_tensor_value_info('y', T.FLOAT, ['batch'])], opset=12)
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_name('batch', 2)
    sess = ort.InferenceSession(m.SerializeToString(), so)
    assert sess.get_inputs()[0].shape == [2, 3]
    [y] = sess.run(None, {'x': np.array([[1, 2, 3], [4, 5, 6]], np.float32)})
    assert y.tolist() == [6, 15]
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
        sess.run(None, {'x': np.zeros((3, 3), np.float32)})
    # without the override the dim stays free
    assert ort.InferenceSession(m.SerializeToString()).get_inputs()[0].shape == ['batch', 3]


def test_free_dimension_override_silero():
    path = shared_model('silero_op15')
    folder = os.path.dirname(path)
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_name('batch', 1)
    sess = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
    assert [i.shape for i in sess.get_inputs()] == [[1, 'sequence'], [2, 1, 128], []]
    feed = {k: np.load(os.path.join(folder, 'in', k + '.npy')) for k in ['input', 'state', 'sr']}
    for k, out in enumerate(sess.run(None, feed)):  # ONNX Runtime's outputs, ref/K.npy
        np.testing.assert_allclose(out, np.load(os.path.join(folder, 'ref', f'{k}.npy')),
                                   rtol=1e-5, atol=1e-6)


def test_onnxsim_model_info(capsys):
    from omopt.onnxsim import model_info
    import omopt.onnxsim.model_info as mi
    assert mi is model_info
    m = folding_model()
    s, _ = onnxsim.simplify(m)
    model_info.print_simplifying_info(m, s)
    out = capsys.readouterr().out
    assert '| Constant   | 1              | 0                |' in out
    assert '| Mul        | 1              | 0                |' in out
    assert model_info.ModelInfo(m).op_nums == {'Constant': 1, 'Mul': 1, 'Add': 1}
    assert onnxsim.__version__ == ort.get_version_string()


def test_unused_output_keeps_every_input():
    # y = x + 1, z = -u; onnxsim's unused_output=['z'] drops z and keeps u as an input, so
    # a script that feeds x and u still runs (ONNX Runtime refuses an undeclared feed)
    one = numpy_helper.from_array(np.array(1, np.float32), 'one')
    m = model([h.make_node('Add', ['x', 'one'], ['y']), h.make_node('Neg', ['u'], ['z'])],
              [h.make_tensor_value_info('x', T.FLOAT, [2]),
               h.make_tensor_value_info('u', T.FLOAT, [2])],
              [h.make_tensor_value_info('y', T.FLOAT, [2]),
               h.make_tensor_value_info('z', T.FLOAT, [2])], [one])
    s, ok = onnxsim.simplify(m, unused_output=['z'])
    assert ok
    assert [i.name for i in s.graph.input] == ['x', 'u']
    assert [o.name for o in s.graph.output] == ['y']
    [y] = ort.InferenceSession(s.SerializeToString()).run(
        None, {'x': np.array([1, 2], np.float32), 'u': np.zeros(2, np.float32)})
    assert y.tolist() == [2, 3]
    with pytest.raises(RuntimeError, match='output named "w"'):
        onnxsim.simplify(m, unused_output=['w'])


def test_unused_output_silero():
    path = shared_model('silero_op15')
    folder = os.path.dirname(path)
    s, ok = onnxsim.simplify(onnx.load(path), unused_output=['stateN'], check_n=1)
    assert ok
    assert [i.name for i in s.graph.input] == ['input', 'state', 'sr']  # sr was dropped
    feed = {k: np.load(os.path.join(folder, 'in', k + '.npy')) for k in ['input', 'state', 'sr']}
    [out] = ort.InferenceSession(s.SerializeToString()).run(None, feed)
    np.testing.assert_allclose(out, np.load(os.path.join(folder, 'ref', '0.npy')),
                               rtol=1e-5, atol=1e-6)


def test_capi_pybind_state_import():
    from omopt.onnxruntime.capi._pybind_state import InvalidArgument
    import omopt.onnxruntime.capi._pybind_state as C
    assert C is ort.capi.onnxruntime_pybind11_state
    with pytest.raises(InvalidArgument):
        relu_session().run(None, {'x': np.zeros((2, 3), np.float64)})


def test_custom_op_is_invalid_graph():
    # ONNX Runtime: a node of a domain it has no schema for is InvalidGraph at session
    # creation; scripts catch that class (omopt's Unsupported is also a NotImplemented)
    m = h.make_model(h.make_graph([h.make_node('Foo', ['x'], ['y'], domain='my.domain')], 'g',
                                  [h.make_tensor_value_info('x', T.FLOAT, [2])],
                                  [h.make_tensor_value_info('y', T.FLOAT, [2])]),
                     opset_imports=[h.make_opsetid('', 13), h.make_opsetid('my.domain', 1)])
    C = ort.capi.onnxruntime_pybind11_state
    with pytest.raises(C.InvalidGraph, match='my.domain.Foo'):
        ort.InferenceSession(m.SerializeToString())
    with pytest.raises(C.NotImplemented):
        ort.InferenceSession(m.SerializeToString())


def test_cli_input_data_path_bin(tmp_path):
    # onnxsim reads --input-data-path files with np.load whatever their name
    m = model([h.make_node('Relu', ['x'], ['y'])], [h.make_tensor_value_info('x', T.FLOAT, [3])],
              [h.make_tensor_value_info('y', T.FLOAT, [3])])
    src, out, data = tmp_path / 'm.onnx', tmp_path / 's.onnx', tmp_path / 'x.bin'
    onnx.save(m, str(src))
    with open(data, 'wb') as fh:
        np.save(fh, np.array([1, -2, 3], np.float32))
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxsim', str(src), str(out), '1',
                        '--input-data-path', f'x:{data}'], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert 'Finish!' in r.stdout
    (tmp_path / 'raw.bin').write_bytes(b'\0' * 12)
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxsim', str(src), str(out), '1',
                        '--input-data-path', f'x:{tmp_path / "raw.bin"}'],
                       capture_output=True, text=True)
    assert r.returncode == 2 and 'raw.bin' in r.stderr


def test_node_failure_at_run_is_runtime_exception():
    # ONNX Runtime: "RUNTIME_EXCEPTION : Non-zero status code returned while running Add node"
    m = model([h.make_node('Add', ['a', 'b'], ['y'])],
              [h.make_tensor_value_info('a', T.FLOAT, ['n']),
               h.make_tensor_value_info('b', T.FLOAT, ['m'])],
              [h.make_tensor_value_info('y', T.FLOAT, None)])
    C = ort.capi.onnxruntime_pybind11_state
    sess = ort.InferenceSession(m.SerializeToString())
    feed = {'a': np.zeros(3, np.float32), 'b': np.zeros(4, np.float32)}
    with pytest.raises(C.RuntimeException, match='broadcast'):
        sess.run(None, feed)
    with pytest.raises(C.Fail):
        sess.run(None, feed)
    with pytest.raises(C.InvalidArgument):  # and still omopt's InvalidInput
        sess.run(None, feed)
    # a wrong feed is InvalidArgument only, as ONNX Runtime's input check
    with pytest.raises(C.InvalidArgument) as e:
        sess.run(None, {'a': np.zeros((3, 1), np.float32), 'b': feed['b']})
    assert not isinstance(e.value, C.RuntimeException)


def test_onnxslim_warnings_name_onnxslim():
    from omopt import onnxslim
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        onnxslim.slim(folding_model(), skip_fusion_patterns=['FusionGelu'])
    msgs = [str(x.message) for x in w]
    assert any(m.startswith("omopt.onnxslim: fusion pattern 'FusionGelu'") for m in msgs), msgs
    assert all(x.filename == __file__ for x in w)  # attributed to the caller
