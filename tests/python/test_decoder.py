"""Tiny GenAI-format decoders (tests/decoder/<variant>, written by tests/gen_cases_decoder.py
from bench/gen_decoder.py with ONNX Runtime 1.30's outputs stored beside them) in omopt: the
prompt step (7 tokens, empty past) and one decode step (the presents fed back), fast mode at 1
and 2 threads: every output within 1e-2 of its largest magnitude (the issue's acceptance) and
the same argmax token; exact mode within 1e-4 on the float32 variants, 1e-2 on the float16 ones
(their activations round to float16 between nodes: ~1e-3 off ONNX Runtime in either mode).
Every variant runs: omopt has kernels for all their ops (GroupQueryAttention, float16
SkipSimplifiedLayerNormalization included), so an Unsupported node fails the test. The outputs
are stored, so the test needs neither ../shared nor ONNX Runtime."""
import os

import numpy as np
import pytest

import omopt

onnx = pytest.importorskip('onnx')
from onnx import numpy_helper  # noqa: E402

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = os.path.join(SRC, 'tests', 'decoder')
VARIANTS = sorted(os.listdir(CASES)) if os.path.isdir(CASES) else []


def load_set(d, k):
    ds = os.path.join(d, 'test_data_set_%d' % k)
    ins, outs = {}, []
    for i in range(len(os.listdir(ds))):
        p = os.path.join(ds, 'input_%d.pb' % i)
        if os.path.exists(p):
            t = onnx.TensorProto()
            t.ParseFromString(open(p, 'rb').read())
            ins[t.name] = numpy_helper.to_array(t)
        p = os.path.join(ds, 'output_%d.pb' % i)
        if os.path.exists(p):
            t = onnx.TensorProto()
            t.ParseFromString(open(p, 'rb').read())
            outs.append(numpy_helper.to_array(t))
    return ins, outs


def check(sess, ins, want, tol):
    got = sess.run(None, ins)
    assert len(got) == len(want)
    for g, w, o in zip(got, want, sess.get_outputs()):
        assert g.shape == w.shape, o.name
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        rel = np.max(np.abs(g64 - w64)) / max(np.max(np.abs(w64)), 1e-30) if w.size else 0
        assert rel <= tol, '%s: max |diff| %.3g of the largest magnitude' % (o.name, rel)
    assert np.argmax(got[0][0, -1]) == np.argmax(want[0][0, -1])


@pytest.mark.parametrize('variant', VARIANTS)
@pytest.mark.parametrize('threads', [1, 2])
def test_prompt_and_step(variant, threads):
    d = os.path.join(CASES, variant)
    sess = omopt.InferenceSession(os.path.join(d, 'model.onnx'), threads=threads)
    for k in (0, 1):
        ins, want = load_set(d, k)
        check(sess, ins, want, 1e-2)


@pytest.mark.parametrize('variant', VARIANTS)
def test_exact(variant):
    d = os.path.join(CASES, variant)
    sess = omopt.InferenceSession(os.path.join(d, 'model.onnx'), exact=True)
    for k in (0, 1):
        ins, want = load_set(d, k)
        check(sess, ins, want, 1e-2 if 'fp16' in variant else 1e-4)


def test_cases_present():
    """the generator wrote every variant (a missing folder would silently test nothing)"""
    assert {'gqa', 'gqa_fp16', 'gqa_gbq', 'onnx_attention', 'onnx_attention_fp16'} <= set(VARIANTS)


@pytest.mark.parametrize('fold_qdq', [False, True])
def test_simplify_keeps_gather_bq(fold_qdq):
    """GatherBlockQuantized with every input constant (indices too) stays a node: the 4-bit
    table is never folded into a float initializer, not even when QDQ folding is asked for"""
    m = onnx.load(os.path.join(SRC, 'tests', 'cases', 'contrib', 'gbq_u8_b4_zp', 'model.onnx'))
    m.graph.initializer.append(numpy_helper.from_array(np.array([[0, 9, -1], [3, -10, 3]]),
                                                       'idx'))
    del m.graph.input[:]
    s = omopt.simplify(m, fold_qdq=fold_qdq)
    assert [n.op_type for n in s.graph.node] == ['GatherBlockQuantized']
    assert sorted(i.name for i in s.graph.initializer) == ['data', 'idx', 'scales', 'zp']
