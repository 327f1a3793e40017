"""fuse_qdq (passes/fuse_qdq.c) and QLinearConv's oneDNN int8 path (kernels/conv/conv_dnnl_int8.c):
DequantizeLinear -> Conv -> QuantizeLinear groups as ONNX Runtime's static quantizer writes
them, run optimized (QLinearConv) against the same model unoptimized (float Conv between the
DequantizeLinear and QuantizeLinear), on random inputs and batches 0, 1 and 3: the quantized
outputs differ by at most one step (the float sum rounds before QuantizeLinear does); exact
mode keeps the float groups (same bytes optimized or not). QLinearConv itself, fast against
exact (the integer sums in double, tests/test_ops_conv.c): at most one step apart. Groups
that do not fit (a Conv output with a second reader, non-constant weights, a bias of another
scale) stay float: the same bytes as unoptimized; weights with a zero point fuse, on the
integer sums."""
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

# C, M, H, W, K, stride, pad, group, xtype, per_channel, bias
CASES = [
    (3, 8, 11, 9, 3, 2, 1, 1, np.int8, True, True),     # stem-like, odd extents
    (16, 24, 7, 7, 1, 1, 0, 1, np.int8, True, True),    # 1x1
    (8, 8, 9, 9, 3, 1, 1, 8, np.int8, True, True),      # depthwise 3x3
    (12, 12, 10, 10, 5, 2, 2, 12, np.int8, True, False),  # depthwise 5x5/2, no bias
    (5, 7, 6, 8, 3, 1, 1, 1, np.uint8, False, True),    # uint8 activations, per tensor, odd C M
    (6, 4, 8, 8, 3, 1, 0, 2, np.int8, False, True),     # grouped, no pads
    (4, 8, 9, 7, 3, 2, 1, 4, np.uint8, True, True),     # depthwise, 2 outputs a channel
    (3, 3, 190, 180, 3, 1, 1, 3, np.uint8, True, True),  # depthwise, a large plane
]


def act_q(rng, t):
    """an activation's scale and zero point: int8 around a range with negatives"""
    if t == np.uint8:
        return np.float32(0.05), np.uint8(rng.integers(100, 140))
    return np.float32(0.05), np.int8(rng.integers(-20, 20))


def qdq_conv_model(case, seed=0, shared_reader=False, bias_scale=1.0, w_zp=0):
    C, M, H, W, K, stride, pad, group, xt, per_channel, bias = case
    rng = np.random.default_rng(seed)
    xs, xz = act_q(rng, xt)
    ys, yz = np.float32(0.08), np.int8(rng.integers(-10, 10))
    w = rng.integers(-127, 128, (M, C // group, K, K)).astype(np.int8)
    ws = (rng.random(M if per_channel else 1) * 0.01 + 0.002).astype(np.float32)
    if not per_channel:
        ws = ws.reshape(())
    inits = [numpy_helper.from_array(np.array(xs), 'xs'),
             numpy_helper.from_array(np.array(xz), 'xz'),
             numpy_helper.from_array(w, 'wq'), numpy_helper.from_array(ws, 'ws'),
             numpy_helper.from_array(np.full(ws.shape, w_zp, np.int8), 'wz'),
             numpy_helper.from_array(np.array(ys), 'ys'),
             numpy_helper.from_array(np.array(yz), 'yz')]
    nodes = [helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
             helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
             helper.make_node('DequantizeLinear', ['wq', 'ws', 'wz'], ['wd'], axis=0)]
    conv_in = ['xd', 'wd']
    if bias:
        bs = (xs * ws * np.float32(bias_scale)).astype(np.float32).reshape(-1)
        b = rng.integers(-3000, 3000, M).astype(np.int32)
        inits += [numpy_helper.from_array(b, 'bq'), numpy_helper.from_array(bs, 'bs'),
                  numpy_helper.from_array(np.zeros(bs.shape, np.int32), 'bz')]
        nodes.append(helper.make_node('DequantizeLinear', ['bq', 'bs', 'bz'], ['bd'], axis=0))
        conv_in.append('bd')
    nodes += [helper.make_node('Conv', conv_in, ['c'], kernel_shape=[K, K], strides=[stride] * 2,
                               pads=[pad] * 4, group=group),
              helper.make_node('QuantizeLinear', ['c', 'ys', 'yz'], ['yq']),
              helper.make_node('DequantizeLinear', ['yq', 'ys', 'yz'], ['y'])]
    outs = [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)]
    if shared_reader:  # the Conv output read by a second node: not fused
        nodes.append(helper.make_node('Relu', ['c'], ['r']))
        outs.append(helper.make_tensor_value_info('r', TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, 'qdq_conv',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                                         ['N', C, H, W])], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    return m.SerializeToString(), float(ys)


def run(model, x, **kw):
    return omopt.InferenceSession(model, **kw).run(None, {'x': x})


def inputs(case, seed):
    C, _, H, W = case[:4]
    rng = np.random.default_rng(seed + 100)
    for n in (0, 1, 3):
        yield (rng.standard_normal((n, C, H, W)) * 3).astype(np.float32)


def profile(model, tmp_path, x, *flags):
    p = tmp_path / 'm.onnx'
    p.write_bytes(model)
    np.save(tmp_path / 'x.npy', x)
    r = subprocess.run([OMOPT, 'run', str(p), '--input', 'x=%s' % (tmp_path / 'x.npy'),
                        '--profile-nodes', *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout + r.stderr


@pytest.mark.parametrize('k', range(len(CASES)))
def test_fused_within_one_step(k, tmp_path):
    case = CASES[k]
    model, ys = qdq_conv_model(case, seed=k)
    for x in inputs(case, k):
        [want] = run(model, x, optimize=False)
        [got] = run(model, x)
        assert got.shape == want.shape
        if x.shape[0]:
            assert np.abs(got - want).max() <= ys * 1.001
            assert np.mean(got == want) > 0.9  # one step off is a rounding tie, rare
        # exact mode keeps the float groups
        [e0] = run(model, x, exact=True, optimize=False)
        [e1] = run(model, x, exact=True)
        assert e0.tobytes() == e1.tobytes()
    x1 = np.ones((1,) + tuple(case[:1]) + tuple(case[2:4]), np.float32)
    text = profile(model, tmp_path, x1)
    assert 'QLinearConv' in text and 'Conv ' not in text.replace('QLinearConv', '')
    # omopt run --exact optimizes for exact mode (om_simplify_options.exact): no int8 group
    assert 'QLinearConv' not in profile(model, tmp_path, x1, '--exact')


def test_weight_zero_point_fused_on_integer_sums(tmp_path):
    """weights with a zero point: QLinearConv still, on the integer sums (oneDNN's int8
    convolution takes none)"""
    case = CASES[0]
    model, ys = qdq_conv_model(case, w_zp=3)
    for x in inputs(case, 0):
        [want] = run(model, x, optimize=False)
        [got] = run(model, x)
        assert got.shape == want.shape and (not x.shape[0] or np.abs(got - want).max() <= ys)
    text = profile(model, tmp_path, np.ones((1,) + tuple(case[:1]) + tuple(case[2:4]),
                                            np.float32))
    # fast mode's integer sums: the 8-bit product (oneDNN's with VNNI, int16 pairs on AVX2)
    assert 'QLinearConv' in text and ('im2col-igemm' in text or 'avx2' not in cpu_flags())


@pytest.mark.parametrize('what', ['shared_reader', 'bias_scale'])
def test_unfit_groups_stay_float(what, tmp_path):
    case = CASES[0]
    kw = {'shared_reader': {'shared_reader': True}, 'bias_scale': {'bias_scale': 1.5}}[what]
    model, _ = qdq_conv_model(case, **kw)
    x = np.ones((2,) + tuple(case[:1]) + tuple(case[2:4]), np.float32)
    want = run(model, x, optimize=False)
    got = run(model, x)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(want, got))
    assert 'QLinearConv' not in profile(model, tmp_path, x)


def qdq_gemm_model(K, N, trans_b, per_channel, bias, q_out, xt, seed, bias_scale=1.0,
                   alpha=None):
    """DequantizeLinear of x and of an int8 weight [and of an int32 bias] -> Gemm [->
    QuantizeLinear]: the static quantizer's classifier, which fast mode runs as QGemm"""
    rng = np.random.default_rng(seed)
    xs, xz = act_q(rng, xt)
    w = rng.integers(-127, 128, (N, K) if trans_b else (K, N)).astype(np.int8)
    ws = (rng.random(N if per_channel else 1) * 0.01 + 0.002).astype(np.float32)
    if not per_channel:
        ws = ws.reshape(())
    inits = [numpy_helper.from_array(np.array(xs), 'xs'),
             numpy_helper.from_array(np.array(xz), 'xz'),
             numpy_helper.from_array(w, 'wq'), numpy_helper.from_array(ws, 'ws'),
             numpy_helper.from_array(np.zeros(ws.shape, np.int8), 'wz'),
             numpy_helper.from_array(np.array(np.float32(0.08)), 'ys'),
             numpy_helper.from_array(np.array(np.int8(3)), 'yz')]
    nodes = [helper.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq']),
             helper.make_node('DequantizeLinear', ['xq', 'xs', 'xz'], ['xd']),
             helper.make_node('DequantizeLinear', ['wq', 'ws', 'wz'], ['wd'],
                              axis=0 if trans_b else 1)]
    gemm_in = ['xd', 'wd']
    if bias:
        bs = (xs * ws * np.float32(bias_scale)).astype(np.float32).reshape(-1)
        inits += [numpy_helper.from_array(rng.integers(-3000, 3000, N).astype(np.int32), 'bq'),
                  numpy_helper.from_array(bs, 'bs'),
                  numpy_helper.from_array(np.zeros(bs.shape, np.int32), 'bz')]
        nodes.append(helper.make_node('DequantizeLinear', ['bq', 'bs', 'bz'], ['bd'], axis=0))
        gemm_in.append('bd')
    alpha = alpha or (1.0 if bias else 0.75)  # QGemm's alpha would scale the bias too
    nodes.append(helper.make_node('Gemm', gemm_in, ['g' if q_out else 'y'], transB=trans_b,
                                  alpha=alpha))
    if q_out:
        nodes += [helper.make_node('QuantizeLinear', ['g', 'ys', 'yz'], ['yq']),
                  helper.make_node('DequantizeLinear', ['yq', 'ys', 'yz'], ['y'])]
    g = helper.make_graph(nodes, 'qdq_gemm',
                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['M', K])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]).SerializeToString()


# K, N, transB, per-channel weights, bias, QuantizeLinear after, x's type; K * N of the first
# two over 16384: the weights packed once
GEMM_CASES = [(1280, 40, 1, True, True, True, np.uint8), (300, 70, 0, True, False, False, np.int8),
              (33, 17, 1, False, True, False, np.uint8), (64, 9, 0, False, True, True, np.int8)]


@pytest.mark.parametrize('k', range(len(GEMM_CASES)))
def test_qdq_gemm_runs_as_qgemm(k, tmp_path):
    K, N, trans_b, per_channel, bias, q_out, xt = GEMM_CASES[k]
    model = qdq_gemm_model(K, N, trans_b, per_channel, bias, q_out, xt, seed=k)
    rng = np.random.default_rng(k)
    for m in (0, 1, 5):
        x = (rng.standard_normal((m, K)) * 3).astype(np.float32)
        [want] = run(model, x, optimize=False)
        for threads in (1, 2):
            [got] = run(model, x, threads=threads)
            assert got.shape == want.shape == (m, N)
            if not m:
                continue
            if q_out:  # one step off is a rounding tie of the two float orders, rare
                assert np.abs(got - want).max() <= 0.08 * 1.001
                assert np.mean(got == want) > 0.9
            else:  # the same integer sums, scaled in another order
                assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()
        [e0] = run(model, x, exact=True, optimize=False)
        [e1] = run(model, x, exact=True)
        assert e0.tobytes() == e1.tobytes()
    p = tmp_path / 'g.onnx'
    p.write_bytes(model)
    np.save(tmp_path / 'x.npy', np.ones((2, K), np.float32))
    r = subprocess.run([OMOPT, 'run', str(p), '--input', 'x=%s' % (tmp_path / 'x.npy'),
                        '--profile-nodes'], capture_output=True, text=True)
    assert 'QGemm' in r.stdout and 'Gemm ' not in r.stdout.replace('QGemm', ''), r.stdout


QDQ_GEMM_CASES = sorted(d for d in os.listdir(os.path.join(SRC, 'tests', 'cases', 'dynq'))
                        if d.startswith('qdq_gemm_'))


@pytest.mark.parametrize('name', QDQ_GEMM_CASES)
def test_qdq_gemm_cases_against_onnxruntime(name):
    """tests/gen_cases_qdq_gemm.py's cases, ONNX Runtime's outputs: the fused QGemm (the
    conformance runner runs them as written, without om_optimize)"""
    d = os.path.join(SRC, 'tests', 'cases', 'dynq', name)
    with open(os.path.join(d, 'model.onnx'), 'rb') as f:
        model = f.read()
    tensors = []
    for n in ('input_0.pb', 'output_0.pb'):
        t = TensorProto()
        with open(os.path.join(d, 'test_data_set_0', n), 'rb') as f:
            t.ParseFromString(f.read())
        tensors.append(numpy_helper.to_array(t))
    x, want = tensors
    for threads in (1, 2):
        [got] = run(model, x, threads=threads)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('unfit', [{'bias_scale': 1.5}, {'alpha': 0.5}])
def test_qdq_gemm_unfit_stays_float(unfit, tmp_path):
    """a bias of another scale than x's times w's, or alpha with a bias"""
    model = qdq_gemm_model(64, 9, 1, True, True, True, np.uint8, seed=0, **unfit)
    x = np.ones((2, 64), np.float32)
    assert run(model, x)[0].tobytes() == run(model, x, optimize=False)[0].tobytes()
    p = tmp_path / 'g.onnx'
    p.write_bytes(model)
    np.save(tmp_path / 'x.npy', x)
    r = subprocess.run([OMOPT, 'run', str(p), '--input', 'x=%s' % (tmp_path / 'x.npy'),
                        '--profile-nodes'], capture_output=True, text=True)
    assert 'QGemm' not in r.stdout and 'Gemm' in r.stdout, r.stdout


def qlinearconv_model(case, seed, wmax=127):
    """the fused op itself, its weights constants (so that oneDNN's path takes it), of
    magnitude wmax at most"""
    C, M, H, W, K, stride, pad, group, xt, per_channel, bias = case
    rng = np.random.default_rng(seed)
    xs, xz = act_q(rng, xt)
    w = rng.integers(-wmax, wmax + 1, (M, C // group, K, K)).astype(np.int8)
    ws = (rng.random(M if per_channel else 1) * 0.01 + 0.002).astype(np.float32)
    inits = [numpy_helper.from_array(np.array(xs), 'xs'),
             numpy_helper.from_array(np.array(xz), 'xz'),
             numpy_helper.from_array(w, 'wq'), numpy_helper.from_array(ws, 'ws'),
             numpy_helper.from_array(np.zeros(ws.shape, np.int8), 'wz'),
             numpy_helper.from_array(np.array(np.float32(0.08)), 'ys'),
             numpy_helper.from_array(np.array(np.int8(-5)), 'yz')]
    ins = ['x', 'xs', 'xz', 'wq', 'ws', 'wz', 'ys', 'yz']
    if bias:
        b = rng.integers(-3000, 3000, M).astype(np.int32)
        inits.append(numpy_helper.from_array(b, 'b'))
        ins.append('b')
    node = helper.make_node('QLinearConv', ins, ['y'], kernel_shape=[K, K],
                            strides=[stride] * 2, pads=[pad] * 4, group=group)
    g = helper.make_graph([node], 'qlinearconv',
                          [helper.make_tensor_value_info(
                              'x', TensorProto.INT8 if xt == np.int8 else TensorProto.UINT8,
                              ['N', C, H, W])],
                          [helper.make_tensor_value_info('y', TensorProto.INT8, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]).SerializeToString()


def has_dnnl():
    try:
        with open(os.path.join(BUILD, 'compile_commands.json')) as f:
            return 'OM_HAVE_DNNL' in f.read()
    except OSError:
        return False


def cpu_flags():
    try:
        with open('/proc/cpuinfo') as f:
            return set(f.read().split())
    except OSError:
        return set()


def cpu_has_vnni():
    """whether the CPU multiplies 8-bit pairs into 32 bits (AVX512-VNNI or AVX-VNNI)"""
    return bool({'avx512_vnni', 'avx_vnni'} & cpu_flags())


def dnnl_int8_exact(case, wmax):
    """where oneDNN's int8 conv is exact and omopt takes it (conv_dnnl_int8.c): with VNNI;
    without it (int8 activations given to it as uint8) depthwise, or with weights of
    magnitude 64 at most (vpmaddubsw's pairs) where the CPU has no AVX2 (with AVX2 the
    integer sums' quads take every conv that is not depthwise, igemm_quads.h)"""
    C, M, group = case[0], case[1], case[7]
    avx2 = 'avx2' in cpu_flags()
    return cpu_has_vnni() or (group == C == M) or (wmax <= 64 and not avx2)


def dw_phase_positions(case):
    """the positions of a depthwise conv's phase planes (conv_dw_flat.c), with the tap loop's
    overrun of 32"""
    H, W, K, stride, pad = case[2:7]
    OH, OW = (H + 2 * pad - K) // stride + 1, (W + 2 * pad - K) // stride + 1
    return stride * stride * (OH + (K - 1) // stride) * (OW + (K - 1) // stride) + 32


def int8_conv_path(case, wmax):
    """the path fast mode takes for QLinearConv: without VNNI a depthwise conv takes the float
    phase loop on NCHW values, 8 channels a vector on AVX2 with FMA for planes of 32,768
    positions at most (conv_dw_lanes.c), else one channel at a time (conv_dw_int.c); else
    oneDNN's int8 conv where it is exact, else the integer sums"""
    C, M, group = case[0], case[1], case[7]
    if not cpu_has_vnni() and group == C and M % C == 0:
        lanes = {'avx2', 'fma'} <= cpu_flags() and dw_phase_positions(case) <= 32768
        return 'dw-lanes-int8' if lanes else 'dw-flat-int8'
    return 'onednn-int8' if has_dnnl() and dnnl_int8_exact(case, wmax) else 'im2col-igemm'


@pytest.mark.parametrize('xt', [np.uint8, np.int8])
def test_depthwise_1d_fast_against_exact(xt, tmp_path):
    """a 1-D depthwise QLinearConv (kernel 5, stride 2, pads 2 and 1, 11 channels: a partial
    group of 8 lanes) in fast mode: exact mode's bytes, on the path int8_conv_path names"""
    C, L, K = 11, 37, 5
    rng = np.random.default_rng(5)
    xs, xz = act_q(rng, xt)
    w = rng.integers(-127, 128, (C, 1, K)).astype(np.int8)
    ws = (rng.random(C) * 0.01 + 0.002).astype(np.float32)
    inits = [numpy_helper.from_array(np.array(xs), 'xs'),
             numpy_helper.from_array(np.array(xz), 'xz'),
             numpy_helper.from_array(w, 'wq'), numpy_helper.from_array(ws, 'ws'),
             numpy_helper.from_array(np.zeros(C, np.int8), 'wz'),
             numpy_helper.from_array(np.array(np.float32(0.08)), 'ys'),
             numpy_helper.from_array(np.array(np.int8(-5)), 'yz'),
             numpy_helper.from_array(rng.integers(-3000, 3000, C).astype(np.int32), 'b')]
    node = helper.make_node('QLinearConv', ['x', 'xs', 'xz', 'wq', 'ws', 'wz', 'ys', 'yz', 'b'],
                            ['y'], kernel_shape=[K], strides=[2], pads=[2, 1], group=C)
    g = helper.make_graph([node], 'dw1d', [helper.make_tensor_value_info(
        'x', TensorProto.INT8 if xt == np.int8 else TensorProto.UINT8, ['N', C, L])],
        [helper.make_tensor_value_info('y', TensorProto.INT8, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]).SerializeToString()
    info = np.iinfo(xt)
    x = rng.integers(info.min, info.max + 1, (2, C, L)).astype(xt)
    [want] = run(model, x, exact=True)
    for threads in (1, 2):
        [got] = run(model, x, threads=threads)
        assert got.tobytes() == want.tobytes()
    p = tmp_path / 'q.onnx'
    p.write_bytes(model)
    np.save(tmp_path / 'x.npy', x)
    r = subprocess.run([OMOPT, 'run', str(p), '--input', 'x=%s' % (tmp_path / 'x.npy'),
                        '--profile-nodes'], capture_output=True, text=True)
    if not cpu_has_vnni():  # (with VNNI oneDNN's int8 conv takes it)
        lanes = {'avx2', 'fma'} <= cpu_flags()
        assert ('ran dw-lanes-int8' if lanes else 'ran dw-flat-int8') in r.stdout, r.stdout


@pytest.mark.parametrize('k,wmax', [(k, 127) for k in range(len(CASES))] + [(4, 64), (0, 64)])
def test_qlinearconv_fast_against_exact(k, wmax, tmp_path):
    case = CASES[k]
    model = qlinearconv_model(case, k, wmax)
    rng = np.random.default_rng(k)
    info = np.iinfo(case[8])
    for n in (1, 2):
        x = rng.integers(info.min, info.max + 1, (n,) + tuple(case[:1]) + tuple(case[2:4]))
        x = x.astype(case[8])
        [want] = run(model, x, exact=True)
        for threads in (1, 2):
            [got] = run(model, x, threads=threads)
            d = np.abs(got.astype(np.int32) - want.astype(np.int32))
            assert d.max() <= 1 and np.mean(d == 0) > 0.9
            if int8_conv_path(case, wmax) != 'onednn-int8':
                # exact sums, exact mode's requantization: the same bytes
                assert got.tobytes() == want.tobytes()
    if has_dnnl():  # the fast runs above were oneDNN's where its sums are exact
        p = tmp_path / 'q.onnx'
        p.write_bytes(model)
        np.save(tmp_path / 'x.npy', x)
        r = subprocess.run([OMOPT, 'run', str(p), '--input', 'x=%s' % (tmp_path / 'x.npy'),
                            '--profile-nodes'], capture_output=True, text=True)
        # the integer sums otherwise: the 8-bit product (int16 pairs on AVX2) in fast mode
        assert 'ran ' + int8_conv_path(case, wmax) in r.stdout, r.stdout + r.stderr
