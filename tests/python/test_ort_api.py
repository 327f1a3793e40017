"""test_ort_api.py — omopt.onnxruntime: a script written for onnxruntime runs with only its
import line changed, on a real model (../shared/models/shufflenet), and gives ONNX Runtime's
outputs (ref/0.npy, written by ONNX Runtime 1.30); options, metadata, providers, profiling,
io_binding and ONNX Runtime's exception classes."""
import json
import os
import warnings

import numpy as np
import pytest

import omopt
import omopt.onnxruntime as ort
from omopt.onnxruntime.capi.onnxruntime_pybind11_state import (Fail, InvalidArgument,
                                                               InvalidProtobuf, NoSuchFile,
                                                               NotImplemented)

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(SRC, '..', 'shared'))
SHUFFLENET = os.path.join(SHARED, 'models', 'shufflenet')


def shufflenet():
    if not os.path.isfile(os.path.join(SHUFFLENET, 'model.onnx')):
        pytest.skip(f'{SHUFFLENET}/model.onnx is absent (../shared/models)')
    return SHUFFLENET


def small_model(meta=True):
    """y = x * 2 + b (b an initializer that is also a graph input), with metadata."""
    pytest.importorskip('onnx')
    from onnx import helper as h, numpy_helper
    b = numpy_helper.from_array(np.array([1, 2, 3], np.float32), 'b')
    g = h.make_graph([h.make_node('Mul', ['x', 'two'], ['t']), h.make_node('Add', ['t', 'b'], ['y'])],
                     'g_name', [h.make_tensor_value_info('x', 1, ['N', 3]),
                                h.make_tensor_value_info('b', 1, [3])],
                     [h.make_tensor_value_info('y', 1, ['N', 3])],
                     [b, numpy_helper.from_array(np.array(2, np.float32), 'two')],
                     doc_string='graph doc')
    m = h.make_model(g, producer_name='maker', producer_version='7', domain='ai.test',
                     model_version=5, doc_string='model doc',
                     opset_imports=[h.make_opsetid('', 13)])
    if meta:
        h.set_model_props(m, {'author': 'me', 'k': 'v'})
    return m.SerializeToString()


def test_script_written_for_onnxruntime():
    """The shape of a typical ONNX Runtime script: SessionOptions threads, providers with CUDA
    first, get_inputs shapes, RunOptions, output names; the result is ONNX Runtime's."""
    d = shufflenet()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    with pytest.warns(UserWarning, match='CUDAExecutionProvider'):
        sess = ort.InferenceSession(os.path.join(d, 'model.onnx'), sess_options=so,
                                    providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    assert sess.get_providers() == ['CPUExecutionProvider']
    assert sess.get_session_options() is so
    [inp] = sess.get_inputs()
    [out] = sess.get_outputs()
    assert (inp.name, inp.shape, inp.type) == ('image', ['b', 3, 224, 224], 'tensor(float)')
    assert (out.name, out.shape, out.type) == ('logits', ['b', 1000], 'tensor(float)')
    meta = sess.get_modelmeta()
    assert (meta.producer_name, meta.graph_name) == ('pytorch', 'torch_jit')
    x = np.load(os.path.join(d, 'in', 'image.npy'))
    ro = ort.RunOptions()
    ro.log_severity_level = 3
    [y] = sess.run([out.name], {inp.name: x}, ro)
    ref = np.load(os.path.join(d, 'ref', '0.npy'))
    assert y.shape == ref.shape
    assert np.abs(y - ref).max() <= 1e-4 * np.abs(ref).max()
    # the same through positional sess_options, bytes, and ORT_DISABLE_ALL (no om_optimize)
    so2 = ort.SessionOptions()
    so2.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    with open(os.path.join(d, 'model.onnx'), 'rb') as f:
        sess2 = ort.InferenceSession(f.read(), so2, providers=['CPUExecutionProvider'])
    [y2] = sess2.run(None, {inp.name: x})
    assert np.abs(y2 - ref).max() <= 1e-4 * np.abs(ref).max()


def test_errors_are_onnxruntime_classes(tmp_path):
    sess = ort.InferenceSession(small_model())
    x = np.ones((2, 3), np.float32)
    with pytest.raises(InvalidArgument):  # the wrong element type, as ONNX Runtime
        sess.run(None, {'x': x.astype(np.float64)})
    with pytest.raises(InvalidArgument):  # the wrong rank
        sess.run(None, {'x': np.ones(3, np.float32)})
    with pytest.raises(InvalidArgument):
        sess.run(['nope'], {'x': x})
    with pytest.raises(ValueError):  # inputs missing: ValueError, as ONNX Runtime's run
        sess.run(None, {})
    with pytest.raises(NoSuchFile):
        ort.InferenceSession(str(tmp_path / 'missing.onnx'))
    with pytest.raises(OSError):  # omopt's IoError is an OSError too
        omopt.InferenceSession(str(tmp_path / 'missing.onnx'))
    with pytest.raises(InvalidProtobuf):
        ort.InferenceSession(b'\x08\x07\x12\xff\xff')
    with pytest.raises(TypeError):
        ort.InferenceSession(12)
    with pytest.raises(ValueError, match='unavailable'):
        ort.InferenceSession(small_model(), providers=['NoSuchExecutionProvider'])
    ro = ort.RunOptions()
    ro.terminate = True
    with pytest.raises(Fail):
        sess.run(None, {'x': x}, ro)
    so = ort.SessionOptions()
    with pytest.raises(AttributeError):  # a misspelt option is never silently ignored
        so.intra_op_threads = 2
    with pytest.raises(NotImplementedError):
        so.register_custom_ops_library('libcustom.so')
    with pytest.raises(InvalidArgument):
        so.add_session_config_entry('session.load_model_format', 'ORT')
    assert issubclass(omopt.Unsupported, NotImplemented)


def test_metadata_initializers_profile_iobinding(tmp_path):
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / 'prof')
    so.optimized_model_filepath = str(tmp_path / 'opt.onnx')
    sess = ort.InferenceSession(small_model(), so)
    m = sess.get_modelmeta()
    assert (m.producer_name, m.graph_name, m.graph_description, m.domain, m.description,
            m.version) == ('maker', 'g_name', 'graph doc', 'ai.test', 'model doc', 5)
    assert m.custom_metadata_map == {'author': 'me', 'k': 'v'}
    assert [a.name for a in sess.get_overridable_initializers()] == ['b']
    assert [a.name for a in sess.get_inputs()] == ['x']
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = x * 2 + np.array([1, 2, 3], np.float32)
    assert np.array_equal(sess.run(None, {'x': x})[0], want)
    assert np.array_equal(sess.run([], {'x': x})[0], want)
    b = sess.io_binding()
    b.bind_cpu_input('x', x)
    b.bind_output('y')
    sess.run_with_iobinding(b)
    assert np.array_equal(b.copy_outputs_to_cpu()[0], want)
    assert np.array_equal(b.get_outputs()[0].numpy(), want)
    [v] = sess.run_with_ort_values(None, {'x': ort.OrtValue.ortvalue_from_numpy(x)})
    assert np.array_equal(v.numpy(), want)
    name = sess.end_profiling()
    assert os.path.basename(name).startswith('prof_') and name.endswith('.json')
    events = json.load(open(name))
    assert {e['args']['op_name'] for e in events} >= {'Add'}
    assert all(e['ph'] == 'X' and e['dur'] >= 0 for e in events)
    assert sess.end_profiling() == ''
    # the optimized model was saved, and runs the same
    again = ort.InferenceSession(str(tmp_path / 'opt.onnx'))
    assert np.array_equal(again.run(None, {'x': x})[0], want)
    assert ort.get_available_providers() == ['CPUExecutionProvider']
    assert ort.get_device() == 'CPU'
    assert sess.get_provider_options() == {'CPUExecutionProvider': {}}


def test_threads_follow_session_options():
    so = ort.SessionOptions()
    so.intra_op_num_threads = 3
    assert so.threads() == 3
    so.intra_op_num_threads = 0
    assert so.threads() == len(os.sched_getaffinity(0))
    so.intra_op_num_threads = -1
    with pytest.raises(InvalidArgument):
        ort.InferenceSession(small_model(), so)


def test_dir_shows_the_public_api():
    names = dir(omopt)
    for private in ('ctypes', 'np', 'os', 'tempfile', 'lib', 'Status', 'Tensor'):
        assert private not in names
    assert {'simplify', 'InferenceSession', 'SessionOptions', 'onnxruntime'} <= set(names)
    assert not hasattr(omopt.SessionOptions, '_fields_')  # not the C struct


def test_old_positional_exact_is_refused():
    with pytest.raises(TypeError, match='exact'):
        omopt.InferenceSession(small_model(), True)


@pytest.mark.parametrize('det', [False, True])
def test_use_deterministic_compute_reaches_the_session(monkeypatch, tmp_path, det):
    """SessionOptions.use_deterministic_compute is om_session_options.deterministic (a
    convolution held by another process's work keeps its split only with it: docs/session.md)"""
    import omopt._lib as _lib
    seen = []
    create = _lib.lib.om_session_create

    def spy(model, opts, out, st):
        seen.append(opts._obj.deterministic)
        return create(model, opts, out, st)

    monkeypatch.setattr(_lib.lib, 'om_session_create', spy)
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])])
    p = str(tmp_path / 'relu.onnx')
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), p)
    so = ort.SessionOptions()
    assert so.use_deterministic_compute is False  # ONNX Runtime's default
    so.use_deterministic_compute = det
    s = ort.InferenceSession(p, so)
    assert seen == [int(det)]
    assert s.run(None, {'x': np.array([-1, 2], np.float32)})[0].tolist() == [0, 2]
