"""test_migrate.py — omopt.onnxsim and omopt.onnxslim: scripts and commands written for
onnx-simplifier and OnnxSlim run with only the import (or the module) changed, on a real model
(../shared/models/shufflenet, ONNX Runtime's logits in ref/0.npy), and on small models whose
result is known by hand."""
import os
import subprocess
import sys

import numpy as np
import pytest

import omopt
import omopt.onnxruntime as ort
from omopt import onnxsim, onnxslim

onnx = pytest.importorskip('onnx')
from onnx import helper as h, numpy_helper  # noqa: E402

SRC = os.environ.get('OMOPT_SOURCE', os.path.join(os.path.dirname(__file__), '..', '..'))
SHARED = os.environ.get('OMOPT_SHARED', os.path.join(SRC, '..', 'shared'))
SHUFFLENET = os.path.join(SHARED, 'models', 'shufflenet')


def shufflenet():
    if not os.path.isfile(os.path.join(SHUFFLENET, 'model.onnx')):
        pytest.skip(f'{SHUFFLENET}/model.onnx is absent (../shared/models)')
    return SHUFFLENET


def conv_bn():
    """x [N,2,4,4] -> Conv (1x1, weights 1) -> BatchNormalization (scale 2) -> y; plus an
    Identity to a second output z."""
    w = numpy_helper.from_array(np.ones((2, 2, 1, 1), np.float32), 'w')
    inits = [w] + [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
                   [('s', [2, 2]), ('b', [0, 0]), ('m', [0, 0]), ('v', [1, 1])]]
    g = h.make_graph([h.make_node('Conv', ['x', 'w'], ['c']),
                      h.make_node('BatchNormalization', ['c', 's', 'b', 'm', 'v'], ['y'],
                                  epsilon=0.0),
                      h.make_node('Identity', ['x'], ['z'])], 'g',
                     [h.make_tensor_value_info('x', 1, ['N', 2, 4, 4])],
                     [h.make_tensor_value_info('y', 1, ['N', 2, 4, 4]),
                      h.make_tensor_value_info('z', 1, ['N', 2, 4, 4])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 13)])


def env():
    e = dict(os.environ)
    e['PYTHONPATH'] = os.pathsep.join(p for p in [os.path.join(SRC, 'python'),
                                                  e.get('PYTHONPATH', '')] if p)
    return e


def test_onnxsim_script():
    """onnxsim's README script: overwrite_input_shapes, check_n, the (model, check) pair."""
    m = conv_bn()
    model_simp, check = onnxsim.simplify(m, check_n=2, overwrite_input_shapes={'x': [1, 2, 4, 4]})
    assert check is True
    assert isinstance(model_simp, onnx.ModelProto)
    ops = [n.op_type for n in model_simp.graph.node]
    assert 'BatchNormalization' not in ops and 'Conv' in ops
    assert [d.dim_value for d in model_simp.graph.input[0].type.tensor_type.shape.dim] == [1, 2, 4, 4]
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    y = ort.InferenceSession(model_simp.SerializeToString()).run(['y'], {'x': x})[0]
    assert np.array_equal(y, 2 * (x[:, :1] + x[:, 1:]).repeat(2, axis=1))
    # skip_fuse_bn and skipped_optimizers keep the BatchNormalization
    for kw in ({'skip_fuse_bn': True}, {'skipped_optimizers': ['fuse_bn_into_conv']},
               {'perform_optimization': False}):
        kept, ok = onnxsim.simplify(m, **kw)
        assert ok and 'BatchNormalization' in [n.op_type for n in kept.graph.node], kw
    # unused_output drops z; an unknown name is onnxsim's RuntimeError
    cut, _ = onnxsim.simplify(m, unused_output=['z'])
    assert [o.name for o in cut.graph.output] == ['y']
    with pytest.raises(RuntimeError, match='output named'):
        onnxsim.simplify(m, unused_output=['nope'])
    with pytest.raises(RuntimeError, match='input named'):
        onnxsim.simplify(m, overwrite_input_shapes={'nope': [1]})
    one, _ = onnxsim.simplify(m, overwrite_input_shapes={None: [3, 2, 4, 4]})
    assert one.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 3
    with pytest.warns(UserWarning, match='no pass of its own'):
        onnxsim.simplify(m, skipped_optimizers=['eliminate_nop_monotone_argmax'])
    with pytest.raises(ValueError, match='custom_lib'):
        onnxsim.simplify(m, custom_lib='libcustom.so')


def test_onnxsim_check_fails_as_onnxsim():
    """check_n on a model omopt breaks on purpose (test_break_pass): (model, False)."""
    m = conv_bn()
    out, ok = onnxsim.simplify(m, check_n=1, test_break_pass='fuse_conv_bn')
    assert ok is False and isinstance(out, onnx.ModelProto)


def test_onnxsim_on_shufflenet(tmp_path):
    d = shufflenet()
    model, ok = onnxsim.simplify(os.path.join(d, 'model.onnx'), check_n=1,
                                 overwrite_input_shapes={'image': [1, 3, 224, 224]})
    assert ok and len(model.graph.node) < 828
    x = np.load(os.path.join(d, 'in', 'image.npy'))
    ref = np.load(os.path.join(d, 'ref', '0.npy'))
    [y] = ort.InferenceSession(model.SerializeToString()).run(None, {'image': x})
    assert np.abs(y - ref).max() <= 1e-4 * np.abs(ref).max()
    # the command, with onnxsim's flags
    out = tmp_path / 'cli.onnx'
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxsim', os.path.join(d, 'model.onnx'),
                        str(out), '2', '--overwrite-input-shape', 'image:1,3,224,224',
                        '--skip-fuse-bn', '--skip-optimization', 'fuse_pad_into_conv',
                        '--no-large-tensor', '--skip-shape-inference'],
                       capture_output=True, text=True, env=env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert 'Finish! Here is the difference:' in r.stdout
    assert '| Shape      | 77             | 0                |' in r.stdout
    [y2] = ort.InferenceSession(str(out)).run(None, {'image': x})
    assert np.abs(y2 - ref).max() <= 1e-4 * np.abs(ref).max()


def test_onnxsim_cli_old_spelling(tmp_path):
    src = tmp_path / 'm.onnx'
    onnx.save(conv_bn(), str(src))
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxsim', str(src), str(tmp_path / 'o.onnx'),
                        '--input-shape', '1,2,4,4', '--unused-output', 'z'],
                       capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert 'renamed to "--overwrite-input-shape"' in r.stdout
    o = onnx.load(str(tmp_path / 'o.onnx'))
    assert [x.name for x in o.graph.output] == ['y']
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxsim', str(src), str(tmp_path / 'p.onnx'),
                        '--custom-lib', 'x.so'], capture_output=True, text=True, env=env())
    assert r.returncode == 1 and 'custom_lib' in r.stderr


def test_onnxslim(tmp_path):
    m = conv_bn()
    out = onnxslim.slim(m, input_shapes=['x:1,2,4,4'], outputs=['y'], model_check=True)
    assert isinstance(out, onnx.ModelProto)
    assert [o.name for o in out.graph.output] == ['y']
    assert 'BatchNormalization' not in [n.op_type for n in out.graph.node]
    kept = onnxslim.slim(m, skip_fusion_patterns=['FusionConvBN'])
    assert 'BatchNormalization' in [n.op_type for n in kept.graph.node]
    assert onnxslim.slim(m, str(tmp_path / 's.onnx')) is None
    assert os.path.getsize(tmp_path / 's.onnx') > 0
    with pytest.raises(ValueError, match='NAME:DTYPE'):
        onnxslim.slim(m, outputs=['y:fp16'])
    with pytest.raises(ValueError, match='not one of'):
        onnxslim.slim(m, skip_fusion_patterns=['NoSuchPattern'])
    src = tmp_path / 'm.onnx'
    onnx.save(m, str(src))
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxslim', str(src), str(tmp_path / 'c.onnx'),
                        '--input-shapes', 'x:1,2,4,4', '--model-check', '--no-shape-infer'],
                       capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert '| BatchNormalization | 1' in r.stdout
    r = subprocess.run([sys.executable, '-m', 'omopt.onnxslim', str(src), '--inspect'],
                       capture_output=True, text=True, env=env(), timeout=120)
    assert r.returncode == 0 and 'BatchNormalization: 1' in r.stdout
