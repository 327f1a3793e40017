#!/usr/bin/python3
"""Cases for com.microsoft MultiHeadAttention, Attention and QAttention against ONNX Runtime
(../shared/oracle), written to tests/cases/contrib/{mha,msattn,qattn}_<case>/ in the
backend-test layout.
MultiHeadAttention: separate key/value with and without bias, key/value of another length
(cross attention) and another value head size, key/value already [B, N, L, H], packed KV
(ONNX Runtime's CPU kernel refuses it: the expected outputs are its outputs on the same values
unpacked), past -> present (S = 1 decoding after 7 and 33 tokens, a prompt after a past),
key_padding_mask [B] / [3B + 2] / [B, T] / [B, S, T] with different lengths per batch,
attention_bias [B, N, S, T] and [1, 1, S, T], unidirectional (with a past and with a mask that
hides a whole row), scale, mask_filter_value, odd head sizes, float16.
Attention: 3 equal parts and qkv_hidden_sizes (another value size), every mask_index
form ([B], [2B], [3B + 2], [B, T], [B, S, T]), past -> present with S = 1 and S > 1,
unidirectional with a past, attention_bias, scale, float16.
QAttention: uint8 input with int8 and uint8 weights, per-tensor and per-column scales and zero
points, masks, past -> present, unidirectional.
usage: /usr/bin/python3 tests/gen_cases_mha.py
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'contrib')
rng = np.random.default_rng(24)
MHA_IN = ('query', 'key', 'value', 'bias', 'key_padding_mask', 'attention_bias', 'past_key',
          'past_value')
ATT_IN = ('input', 'weights', 'bias', 'mask_index', 'past', 'attention_bias')
QATT_IN = ('input', 'weight', 'bias', 'input_scale', 'weight_scale', 'mask_index',
           'input_zero_point', 'weight_zero_point', 'past')


def rnd(dt, *shape):
    return rng.standard_normal(shape).astype(dt)


def trim(ins):
    while list(ins.values())[-1] is None:  # trailing omitted inputs left off the node
        ins.popitem()
    return ins


def write(name, op, ins, attrs, n_out, dt):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    return node_case(d, op, trim(ins), attrs, opset=1, domain='com.microsoft', n_outputs=n_out,
                     out_types=[dt] * n_out)


def lengths_mask(B, T, lens):
    return np.array([[1 if j < n else 0 for j in range(T)] for n in lens], np.int32)


def mha(name, B, S, N, H, L=None, Hv=None, past=None, bias=False, mask=None, abias=None,
        layout='bsd', dt=np.float32, present=None, **attrs):
    """layout: 'bsd' (key/value [B, L, D]) or 'bnlh' (already per head); mask: a callable
    (B, S, T) -> int32 array; abias: attention_bias's first two dims."""
    L = S if L is None else L
    Hv = H if Hv is None else Hv
    ins = dict.fromkeys(MHA_IN)
    ins['query'] = rnd(dt, B, S, N * H)
    if layout == 'bsd':
        ins.update(key=rnd(dt, B, L, N * H), value=rnd(dt, B, L, N * Hv))
    else:
        ins.update(key=rnd(dt, B, N, L, H), value=rnd(dt, B, N, L, Hv))
    if bias:
        ins['bias'] = rnd(dt, 2 * N * H + N * Hv)
    P = past or 0
    T = P + L
    if mask is not None:
        ins['key_padding_mask'] = mask(B, S, T)
    if abias is not None:
        ins['attention_bias'] = rnd(dt, abias[0], abias[1], S, T)
    if past is not None:
        ins.update(past_key=rnd(dt, B, N, past, H), past_value=rnd(dt, B, N, past, Hv))
    attrs['num_heads'] = N
    n = 3 if (past is not None or present) else 1
    return write('mha_' + name, 'MultiHeadAttention', ins, attrs, n, dt)


def mha_packed_kv(name, B, S, N, H, L):
    """packed KV [B, L, N, 2, H]: ONNX Runtime's CPU kernel refuses it, so the expected output
    is its output on the same keys and values unpacked"""
    q, k, v = rnd(np.float32, B, S, N * H), rnd(np.float32, B, L, N, H), rnd(np.float32, B, L, N, H)
    d = os.path.join(OUT, 'mha_' + name)
    shutil.rmtree(d, ignore_errors=True)
    ref = node_case(d, 'MultiHeadAttention', {'query': q, 'key': k.reshape(B, L, N * H),
                                              'value': v.reshape(B, L, N * H)},
                    {'num_heads': N}, opset=1, domain='com.microsoft')
    shutil.rmtree(d, ignore_errors=True)
    kv = np.stack([k, v], axis=3)
    node = helper.make_node('MultiHeadAttention', ['query', 'key'], ['y0'],
                            domain='com.microsoft', num_heads=N)
    graph = helper.make_graph(
        [node], 'mha_packed_kv',
        [helper.make_tensor_value_info('query', onnx.TensorProto.FLOAT, q.shape),
         helper.make_tensor_value_info('key', onnx.TensorProto.FLOAT, kv.shape)],
        [helper.make_tensor_value_info('y0', onnx.TensorProto.FLOAT, ref[0].shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                    helper.make_opsetid('com.microsoft', 1)])
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(model, os.path.join(d, 'model.onnx'))
    for i, (nm, a) in enumerate((('query', q), ('key', kv))):
        with open(os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i), 'wb') as f:
            f.write(numpy_helper.from_array(a, nm).SerializeToString())
    with open(os.path.join(d, 'test_data_set_0', 'output_0.pb'), 'wb') as f:
        f.write(numpy_helper.from_array(ref[0], 'y0').SerializeToString())


def attention(name, B, S, N, H, Hin=None, Hv=None, qkv=False, bias=True, mask=None, past=None,
              abias=None, dt=np.float32, **attrs):
    Hin = Hin or N * H
    Hv = H if Hv is None else Hv
    W = 2 * N * H + N * Hv
    ins = dict.fromkeys(ATT_IN)
    ins.update(input=rnd(dt, B, S, Hin), weights=(rnd(dt, Hin, W) / np.sqrt(Hin)).astype(dt))
    if bias:
        ins['bias'] = rnd(dt, W)
    P = past or 0
    T = P + S
    if mask is not None:
        ins['mask_index'] = mask(B, S, T)
    if past is not None:
        ins['past'] = rnd(dt, 2, B, N, past, H)
    if abias is not None:
        ins['attention_bias'] = rnd(dt, abias[0], abias[1], S, T)
    attrs['num_heads'] = N
    if qkv:
        attrs['qkv_hidden_sizes'] = [N * H, N * H, N * Hv]
    return write('msattn_' + name, 'Attention', ins, attrs, 2 if past is not None else 1, dt)


def qattention(name, B, S, N, H, w_signed=True, per_column=False, zp=False, mask=None,
               past=None, **attrs):
    D = N * H
    wt = np.int8 if w_signed else np.uint8
    lo, hi = (-128, 128) if w_signed else (0, 256)
    ins = dict.fromkeys(QATT_IN)
    ins.update(input=rng.integers(0, 256, (B, S, D)).astype(np.uint8),
               weight=rng.integers(lo, hi, (D, 3 * D)).astype(wt),
               bias=rnd(np.float32, 3 * D), input_scale=np.float32(0.02))
    ins['weight_scale'] = (rng.uniform(0.002, 0.006, 3 * D).astype(np.float32) if per_column
                           else np.float32(0.004))
    P = past or 0
    if mask is not None:
        ins['mask_index'] = mask(B, S, P + S)
    if zp:
        ins['input_zero_point'] = np.uint8(128)
        ins['weight_zero_point'] = (rng.integers(lo // 4 + 64 * (not w_signed), hi // 4 +
                                                 64 * (not w_signed), 3 * D).astype(wt)
                                    if per_column else wt(3 if w_signed else 131))
    if past is not None:
        ins['past'] = rnd(np.float32, 2, B, N, past, H)
    attrs['num_heads'] = N
    n = 2 if past is not None else 1
    d = os.path.join(OUT, 'qattn_' + name)
    shutil.rmtree(d, ignore_errors=True)
    return node_case(d, 'QAttention', trim(ins), attrs, opset=1, domain='com.microsoft',
                     n_outputs=n, out_types=[np.float32] * n)


def end_mask(lens):
    return lambda B, S, T: np.array(lens, np.int32)


def end_start_mask(ends, starts):
    return lambda B, S, T: np.array(ends + starts, np.int32)


def end_3b2(lens):
    return lambda B, S, T: np.array(lens + [0] * (2 * len(lens) + 2), np.int32)


def raw2(lens):
    return lambda B, S, T: lengths_mask(B, T, lens)


def raw3(B, S, T):
    m = (rng.uniform(size=(B, S, T)) > 0.3).astype(np.int32)
    m[:, :, 0] = 1
    return m


# ---- MultiHeadAttention ----
mha('self', 1, 5, 2, 8)
mha('self_bias', 2, 4, 3, 16, bias=True)
mha('cross_bias', 2, 3, 2, 8, L=6, bias=True)
mha('cross_v_heads', 1, 4, 2, 8, L=5, Hv=12, bias=True)
mha('cross_bnlh', 2, 3, 4, 8, L=7, layout='bnlh')
mha_packed_kv('packed_kv', 2, 3, 2, 8, 5)
mha('odd_head', 2, 3, 3, 7, bias=True)
mha('decode_past7', 1, 1, 4, 16, past=7, bias=True)
mha('decode_past33_b2', 2, 1, 2, 64, past=33, bias=True, mask=raw2([34, 20]))
mha('prompt_after_past', 1, 4, 2, 8, past=5, unidirectional=1)
mha('prompt_present', 2, 5, 2, 8, present=True, bias=True)
mha('mask_end', 2, 5, 2, 8, mask=end_mask([5, 2]))
mha('mask_3b2', 2, 4, 2, 8, mask=end_3b2([3, 1]))
mha('mask_2d_lengths', 3, 4, 2, 8, mask=raw2([4, 3, 1]))
mha('mask_3d', 2, 4, 2, 8, mask=raw3)
mha('abias', 2, 3, 2, 8, abias=(2, 2), mask=raw2([3, 2]))
mha('abias_broadcast', 2, 3, 2, 8, abias=(1, 1))
mha('causal', 1, 6, 2, 8, unidirectional=1, bias=True)
mha('causal_masked_row', 2, 4, 2, 8, unidirectional=1, mask=raw2([4, 0]))
mha('causal_decode_past', 2, 1, 2, 8, past=6, unidirectional=1, mask=raw2([7, 4]))
mha('scale_filter', 2, 3, 2, 8, scale=0.2, mask_filter_value=-30.0, mask=end_mask([3, 1]))
mha('f16_self_bias', 2, 4, 2, 16, bias=True, dt=np.float16)
mha('f16_decode_past', 2, 1, 2, 16, past=9, mask=raw2([10, 6]), dt=np.float16)
mha('f16_causal', 1, 5, 2, 8, unidirectional=1, dt=np.float16)

# ---- Attention (contrib) ----
attention('bert', 2, 5, 2, 8)
attention('qkv_sizes', 1, 4, 2, 8, Hv=12, qkv=True)
attention('hin_wider', 1, 3, 2, 8, Hin=24)
attention('mask_end', 2, 5, 3, 4, mask=end_mask([5, 3]))
attention('mask_end_start', 2, 5, 2, 8, mask=end_start_mask([5, 4], [0, 2]))
attention('mask_3b2', 2, 4, 2, 8, mask=end_3b2([4, 2]))
attention('mask_2d', 2, 4, 2, 8, mask=raw2([4, 1]))
attention('mask_3d', 2, 4, 2, 8, mask=raw3)
attention('gpt2_prompt', 2, 4, 2, 8, unidirectional=1, past=0)
attention('gpt2_decode', 2, 1, 2, 8, unidirectional=1, past=6, mask=raw2([7, 5]))
attention('gpt2_prompt_after_past', 1, 3, 2, 8, unidirectional=1, past=4)
attention('abias_scale', 2, 3, 2, 8, abias=(1, 2), scale=0.5)
attention('odd_heads', 1, 3, 3, 5, mask=end_mask([2]))
attention('f16', 2, 4, 2, 8, mask=raw2([4, 2]), dt=np.float16)
attention('f16_decode', 1, 1, 2, 8, unidirectional=1, past=5, dt=np.float16)

# ---- QAttention ----
qattention('s8', 2, 4, 2, 8)
qattention('u8_zp', 1, 3, 2, 8, w_signed=False, zp=True)
qattention('s8_per_column_zp', 2, 3, 2, 8, per_column=True, zp=True, mask=end_mask([3, 2]))
qattention('u8_per_column', 1, 4, 2, 4, w_signed=False, per_column=True, mask=raw2([3]))
qattention('decode_past', 2, 1, 2, 8, past=5, unidirectional=1, mask=raw2([6, 3]))
qattention('prompt_causal', 1, 5, 2, 8, unidirectional=1, past=0)
