"""fuse_qdq's DropQDQ rules (passes/fuse_qdq.c): DequantizeLinear -> an op that selects
elements (OM_OP_SELECT: Reshape, Transpose, Slice, Gather, Concat, MaxPool, Squeeze,
Unsqueeze, Flatten, Expand, Tile) -> QuantizeLinear of the same scale and zero point runs as the
op on the 8-bit values, and a QuantizeLinear of a DequantizeLinear alike goes. Both are exact:
the optimized model gives the unoptimized one's bytes, on random inputs at batches 0, 1 and 3,
int8 and uint8, 1 and 2 threads. Where the scales or zero points differ (or a Concat's inputs
have different ones) the QuantizeLinear stays, with the same bytes."""
import os
import subprocess

import numpy as np
import pytest

import omopt

onnx = pytest.importorskip('onnx')
from onnx import helper, numpy_helper, TensorProto  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get('OMOPT_BUILD', os.path.join(SRC, 'build'))
OMOPT = os.path.join(BUILD, 'tools', 'omopt')

C, H, W = 6, 9, 8
S, Z8, ZU8 = 0.05, -3, 131


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def select_model(kind, qt, scale2=S, zp2=None, concat_scale=S, opset=13, scale=S):
    """x -> Q -> DQ -> op -> Q (scale2, zp2) -> DQ -> y; Concat's second input through a Q/DQ
    of concat_scale"""
    zp = Z8 if qt == TensorProto.INT8 else ZU8
    zp2 = zp if zp2 is None else zp2
    npt = np.int8 if qt == TensorProto.INT8 else np.uint8
    inits = [const('s', np.float32(scale)), const('z', npt(zp)), const('s2', np.float32(scale2)),
             const('z2', npt(zp2)), const('s3', np.float32(concat_scale))]
    nodes = [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['xq']),
             helper.make_node('DequantizeLinear', ['xq', 's', 'z'], ['xd'])]
    if kind == 'reshape':
        inits.append(const('shape', np.array([0, C * H, W], np.int64)))
        nodes.append(helper.make_node('Reshape', ['xd', 'shape'], ['o']))
    elif kind == 'transpose':
        nodes.append(helper.make_node('Transpose', ['xd'], ['o'], perm=[0, 2, 3, 1]))
    elif kind == 'slice':
        inits += [const('st', np.array([1, -1], np.int64)), const('en', np.array([5, 2], np.int64)),
                  const('ax', np.array([1, 3], np.int64)), const('sp', np.array([2, -2], np.int64))]
        nodes.append(helper.make_node('Slice', ['xd', 'st', 'en', 'ax', 'sp'], ['o']))
    elif kind == 'gather':
        inits.append(const('idx', np.array([[4, 0], [1, 1]], np.int64)))
        nodes.append(helper.make_node('Gather', ['xd', 'idx'], ['o'], axis=1))
    elif kind == 'concat':
        nodes += [helper.make_node('Neg', ['x'], ['nx']),
                  helper.make_node('QuantizeLinear', ['nx', 's3', 'z'], ['nq']),
                  helper.make_node('DequantizeLinear', ['nq', 's3', 'z'], ['nd']),
                  helper.make_node('Concat', ['xd', 'nd'], ['o'], axis=1)]
    elif kind == 'maxpool':
        nodes.append(helper.make_node('MaxPool', ['xd'], ['o'], kernel_shape=[3, 3],
                                      strides=[2, 2], pads=[1, 1, 1, 1]))
    elif kind == 'squeeze':
        inits.append(const('axes', np.array([1], np.int64)))
        nodes += [helper.make_node('Unsqueeze', ['xd', 'axes'], ['u']),
                  helper.make_node('QuantizeLinear', ['u', 's', 'z'], ['uq']),
                  helper.make_node('DequantizeLinear', ['uq', 's', 'z'], ['ud']),
                  helper.make_node('Squeeze', ['ud', 'axes'], ['o'])]
    elif kind == 'flatten':
        nodes.append(helper.make_node('Flatten', ['xd'], ['o'], axis=2))
    elif kind == 'expand':
        inits.append(const('eshape', np.array([2, 1, 1, 1, 1], np.int64)))
        nodes.append(helper.make_node('Expand', ['xd', 'eshape'], ['o']))
    elif kind == 'tile':
        inits.append(const('reps', np.array([1, 2, 1, 3], np.int64)))
        nodes.append(helper.make_node('Tile', ['xd', 'reps'], ['o']))
    elif kind == 'identity':
        nodes.append(helper.make_node('Identity', ['xd'], ['o']))
    o = 'xd' if kind == 'qdq' else 'o'  # qdq: Q(DQ(xq)) alike, the pair goes
    nodes += [helper.make_node('QuantizeLinear', [o, 's2', 'z2'], ['oq']),
              helper.make_node('DequantizeLinear', ['oq', 's2', 'z2'], ['y'])]
    g = helper.make_graph(nodes, kind,
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', C, H, W])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)]).SerializeToString()


def quantize_count(model, tmp_path):
    """QuantizeLinear nodes om_optimize leaves (omopt run --profile-nodes)"""
    p = tmp_path / 'm.onnx'
    p.write_bytes(model)
    np.save(tmp_path / 'x.npy', np.ones((1, C, H, W), np.float32))
    r = subprocess.run([OMOPT, 'run', str(p), '--input', 'x=%s' % (tmp_path / 'x.npy'),
                        '--bench', '1', '--profile-nodes'], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return sum(1 for line in (r.stdout + r.stderr).splitlines()
               if line.startswith('QuantizeLinear '))


def same_bytes(model):
    rng = np.random.default_rng(7)
    for n in (0, 1, 3):
        x = (rng.standard_normal((n, C, H, W)) * 4).astype(np.float32)
        x[..., 0, 0] = 1e3  # saturates
        [want] = omopt.InferenceSession(model, optimize=False).run(None, {'x': x})
        for threads in (1, 2):
            [got] = omopt.InferenceSession(model, threads=threads).run(None, {'x': x})
            assert got.shape == want.shape and got.tobytes() == want.tobytes()


KINDS = ['reshape', 'transpose', 'slice', 'gather', 'concat', 'maxpool', 'squeeze', 'flatten',
         'expand', 'tile', 'identity', 'qdq']
QTYPES = [TensorProto.INT8, TensorProto.UINT8]


@pytest.mark.parametrize('qt', QTYPES)
@pytest.mark.parametrize('kind', KINDS)
def test_select_runs_on_8_bits(kind, qt, tmp_path):
    model = select_model(kind, qt)
    same_bytes(model)
    # the input's QuantizeLinear alone is left (Concat's: its second input's too)
    assert quantize_count(model, tmp_path) == (2 if kind == 'concat' else 1)


UNFIT = {'scale': {'scale2': S * 1.5}, 'zero_point': {'zp2': 5},
         'concat_scales': {'concat_scale': S * 2}}


def test_before_opset_12_select_ops_stay_float(tmp_path):
    """MaxPool takes 8-bit types from opset 12: at 11 the model keeps its float MaxPool (an
    om_optimize'd model stays valid ONNX); a Q of a DQ alike still goes"""
    model = select_model('maxpool', TensorProto.UINT8, opset=11)
    same_bytes(model)
    assert quantize_count(model, tmp_path) == 2
    model = select_model('qdq', TensorProto.UINT8, opset=11)
    same_bytes(model)
    assert quantize_count(model, tmp_path) == 1


def test_infinite_scale_stays(tmp_path):
    """an infinite scale: DQ(z) is 0 * inf, NaN, which Q makes 0, not z: the pair stays"""
    model = select_model('qdq', TensorProto.UINT8, scale=np.inf, scale2=np.inf)
    same_bytes(model)
    assert quantize_count(model, tmp_path) == 2


@pytest.mark.parametrize('kind', ['transpose', 'qdq'])
@pytest.mark.parametrize('unfit', sorted(UNFIT))
def test_unfit_stays(unfit, kind, tmp_path):
    kind = 'concat' if unfit == 'concat_scales' else kind
    model = select_model(kind, TensorProto.UINT8, **UNFIT[unfit])
    same_bytes(model)
    assert quantize_count(model, tmp_path) == (3 if kind == 'concat' else 2)


# kernel, strides, pads, dilations, ceil_mode, spatial extents: MaxPool of 8-bit X in its own
# type (kernels/nn/pool_max8.c) against the same pool of X as float
POOLS = [([3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0, [13, 12]),
         ([3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 0, [7, 9]),
         ([2, 3], [3, 2], [0, 1, 1, 0], [1, 1], 1, [11, 10]),
         ([3, 2], [1, 2], [2, 0, 2, 1], [2, 2], 0, [9, 12]),   # dilated
         ([4], [2], [1, 2], [1], 1, [17]),                      # 1-D
         ([2, 2, 2], [2, 1, 2], [0, 0, 1, 1, 0, 1], [1, 1, 1], 0, [5, 6, 7])]  # 3-D


def pool_model(k, elem):
    kernel, strides, pads, dil, ceil, ext = POOLS[k]
    node = helper.make_node('MaxPool', ['x'], ['y'], kernel_shape=kernel, strides=strides,
                            pads=pads, dilations=dil, ceil_mode=ceil)
    g = helper.make_graph([node], 'p', [helper.make_tensor_value_info('x', elem, ['N', 3] + ext)],
                          [helper.make_tensor_value_info('y', elem, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]).SerializeToString()


@pytest.mark.parametrize('npt', [np.int8, np.uint8])
@pytest.mark.parametrize('k', range(len(POOLS)))
def test_maxpool_8bit_as_float(k, npt):
    elem = TensorProto.INT8 if npt == np.int8 else TensorProto.UINT8
    m8, mf = pool_model(k, elem), pool_model(k, TensorProto.FLOAT)
    rng = np.random.default_rng(k)
    info = np.iinfo(npt)
    for n in (0, 1, 3):
        x = rng.integers(info.min, info.max + 1, (n, 3) + tuple(POOLS[k][5])).astype(npt)
        for threads in (1, 2):
            [got] = omopt.InferenceSession(m8, threads=threads).run(None, {'x': x})
            [want] = omopt.InferenceSession(mf, exact=True).run(None, {'x': x.astype(np.float32)})
            assert got.dtype == npt and got.shape == want.shape
            assert np.array_equal(got.astype(np.float32), want)
