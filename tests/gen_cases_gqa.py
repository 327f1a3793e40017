#!/usr/bin/python3
"""Cases for com.microsoft GroupQueryAttention against ONNX Runtime (../shared/oracle), written to
tests/cases/contrib/gqa_<case>/ in the backend-test layout: prompts with an absent or empty
past, decoding with past 7 and 33, batch 2 with different seqlens_k (right-padded prompts),
present growing (past + new) and of the past's length (the shape of a shared buffer), GQA
ratios 1, 2 and 4, head sizes 16, 32 and 64 (ONNX Runtime 1.30 takes multiples of 8 only),
rotary (half and interleaved, partial, position_ids in decoding and in a first prompt, where
ONNX Runtime takes position_ids[0][0] + s), local_window_size, softcap, packed QKV,
a prompt after a past, attention_bias, head_sink, smooth_softmax, causal 0, scale, qk_output
1 and 2, float16; quantized caches (k/v_quant_type, kv_cache_bit_width, k_scale, v_scale): int8
and int4, per tensor and per channel, decoding, a first prompt without a past, a prompt after a
past, a present longer than the total, rotary, float16, GQA ratio 4, a window; a window over
right-padded prompts of batch 2 and 3 (padding rows: ONNX Runtime's keys, or zeros).
usage: /usr/bin/python3 tests/gen_cases_gqa.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'contrib')
rng = np.random.default_rng(34)
ORDER = ('query', 'key', 'value', 'past_key', 'past_value', 'seqlens_k', 'total_sequence_length',
         'cos_cache', 'sin_cache', 'position_ids', 'attention_bias', 'head_sink', 'k_scale',
         'v_scale')


def case(name, B, S, Hq, Hkv, D, past, seqlens, total, dt=np.float32, packed=False, rot=0,
         rot_rows=64, qk=0, pos=None, bias=None, sink=False, quant=None, **attrs):
    """past: None (absent) or its length; rot: the caches' width (0: no rotary); quant:
    (quant type, bits) for a quantized cache."""
    def rnd(*shape):
        return rng.standard_normal(shape).astype(dt)
    q, k, v = rnd(B, S, Hq * D), rnd(B, S, Hkv * D), rnd(B, S, Hkv * D)
    ins = dict.fromkeys(ORDER)
    if packed:
        ins['query'] = np.concatenate([q, k, v], -1)
    else:
        ins.update(query=q, key=k, value=v)
    cache_dt = dt
    if quant:
        kind, bits = quant
        cache_dt = np.int8 if bits == 8 else np.uint8
        n = Hkv * D if kind == 'PER_CHANNEL' else 1
        step = 0.04 if bits == 8 else 0.6  # about 3 sigma over the largest code
        ins.update(k_scale=rng.uniform(0.5, 1.5, n).astype(np.float32) * step,
                   v_scale=rng.uniform(0.5, 1.5, n).astype(np.float32) * step)
        attrs.update(k_quant_type=kind, v_quant_type=kind, kv_cache_bit_width=bits)
    if past is not None and quant:
        width, lo, hi = (D, -128, 128) if quant[1] == 8 else ((D + 1) // 2, 0, 256)
        ins.update(past_key=rng.integers(lo, hi, (B, Hkv, past, width)).astype(cache_dt),
                   past_value=rng.integers(lo, hi, (B, Hkv, past, width)).astype(cache_dt))
    elif past is not None:
        ins.update(past_key=rnd(B, Hkv, past, D), past_value=rnd(B, Hkv, past, D))
    ins['seqlens_k'] = np.array(seqlens, np.int32)
    ins['total_sequence_length'] = np.array(total, np.int32)
    if rot:
        angle = rng.uniform(0, 2 * np.pi, (rot_rows, rot))
        ins.update(cos_cache=np.cos(angle).astype(dt), sin_cache=np.sin(angle).astype(dt))
        attrs['do_rotary'] = 1
        if pos is not None:
            ins['position_ids'] = np.array(pos, np.int64)
    if bias is not None:
        ins['attention_bias'] = rnd(*bias)
    if sink:
        ins['head_sink'] = rnd(Hq)
    while list(ins.values())[-1] is None:  # trailing omitted inputs left off the node
        ins.popitem()
    attrs.update(num_heads=Hq, kv_num_heads=Hkv)
    if qk:
        attrs['qk_output'] = qk
    d = os.path.join(OUT, 'gqa_' + name)
    shutil.rmtree(d, ignore_errors=True)
    n = 4 if qk else 3
    node_case(d, 'GroupQueryAttention', ins, attrs, opset=1, domain='com.microsoft',
              n_outputs=n, out_types=[dt, cache_dt, cache_dt, dt][:n])


case('prompt', 1, 6, 4, 2, 16, None, [5], 6)
case('prompt_past0', 1, 5, 4, 2, 16, 0, [4], 5)
case('prompt_b2_padded', 2, 5, 4, 4, 16, None, [4, 2], 5)
case('prompt_shared_b2', 2, 5, 8, 2, 16, 16, [4, 1], 5)
case('decode_past7_h64', 1, 1, 4, 2, 64, 7, [7], 8)
case('decode_past33_ratio4', 1, 1, 8, 2, 16, 33, [33], 34)
case('decode_b2_ratio1', 2, 1, 4, 4, 16, 7, [7, 3], 8)
case('decode_b2_shared', 2, 1, 4, 2, 32, 40, [33, 9], 34)
case('prompt_after_past', 1, 3, 4, 2, 16, 7, [9], 10)
case('rotary_prompt', 2, 6, 4, 2, 32, None, [5, 3], 6, rot=16)
case('rotary_interleaved_decode', 2, 1, 4, 2, 16, 33, [33, 20], 34, rot=8, rotary_interleaved=1)
case('rotary_partial', 1, 5, 4, 2, 32, None, [4], 5, rot=8)
case('rotary_position_ids', 2, 1, 4, 2, 16, 9, [9, 5], 10, rot=8, pos=[[12], [3]])
case('window_prompt', 1, 9, 4, 2, 16, None, [8], 9, local_window_size=3)
case('window_decode', 2, 1, 4, 2, 16, 33, [33, 5], 34, local_window_size=8)
case('softcap_prompt', 1, 6, 4, 2, 16, None, [5], 6, softcap=2.0)
case('softcap_window_decode', 1, 1, 4, 2, 16, 20, [20], 21, softcap=1.5, local_window_size=6)
case('packed_prompt', 1, 5, 4, 2, 16, None, [4], 5, packed=True)
case('packed_rotary_decode', 2, 1, 8, 2, 16, 7, [7, 2], 8, packed=True, rot=8)
case('bias_decode', 2, 1, 4, 2, 16, 7, [7, 4], 8, bias=(2, 1, 1, 8))
case('bias_prompt', 1, 4, 4, 2, 16, None, [3], 4, bias=(1, 4, 4, 4))
case('head_sink', 1, 4, 4, 2, 16, None, [3], 4, sink=True)
case('smooth_softmax', 1, 1, 4, 2, 16, 9, [9], 10, smooth_softmax=1)
case('noncausal', 2, 1, 4, 2, 16, 7, [7, 4], 8, causal=0)
case('scale', 1, 4, 4, 2, 16, None, [3], 4, scale=0.3)
case('qk_scores', 2, 1, 4, 2, 16, 7, [7, 4], 8, qk=1, softcap=3.0)
case('qk_probs_window', 1, 6, 4, 2, 16, None, [5], 6, qk=2, local_window_size=2)
case('f16_prompt', 1, 6, 4, 2, 16, None, [5], 6, dt=np.float16)
case('f16_rotary_decode', 2, 1, 4, 2, 32, 33, [33, 12], 34, dt=np.float16, rot=16)
case('f16_packed_window', 1, 7, 8, 2, 16, None, [6], 7, dt=np.float16, packed=True,
     local_window_size=3)
# a first prompt: ONNX Runtime 1.30 rotates token s of every batch at position_ids[0][0] + s
case('rotary_position_ids_prompt', 2, 4, 4, 2, 16, None, [3, 1], 4, rot=8,
     pos=[[6, 2, 9, 0], [1, 5, 3, 7]])
# quantized caches (ONNX Runtime 1.30's CPU kernel: k_quant_type = v_quant_type; float scales,
# one or kv_num_heads * D; int8 codes, or int4 codes two a byte in uint8); a first prompt has
# an empty past: without one ONNX Runtime types the present as the query and cannot run it
case('q8_tensor_decode', 2, 1, 4, 2, 16, 9, [9, 4], 10, quant=('PER_TENSOR', 8))
case('q8_channel_decode', 1, 1, 8, 2, 32, 33, [33], 34, quant=('PER_CHANNEL', 8))
case('q4_tensor_decode', 2, 1, 4, 2, 16, 7, [7, 3], 8, quant=('PER_TENSOR', 4))
case('q4_channel_decode', 1, 1, 4, 2, 16, 20, [20], 21, quant=('PER_CHANNEL', 4))
case('q8_channel_prompt', 1, 5, 4, 2, 16, 0, [4], 5, quant=('PER_CHANNEL', 8))
case('q4_tensor_prompt_past0', 2, 4, 4, 4, 16, 0, [3, 2], 4, quant=('PER_TENSOR', 4))
case('q8_tensor_prompt_after_past', 1, 3, 4, 2, 16, 6, [8], 9, quant=('PER_TENSOR', 8))
case('q4_channel_shared', 2, 1, 4, 2, 16, 12, [9, 5], 10, quant=('PER_CHANNEL', 4))
case('q8_rotary_decode', 2, 1, 4, 2, 32, 9, [9, 6], 10, rot=16, quant=('PER_CHANNEL', 8))
case('q4_rotary_interleaved_prompt', 1, 6, 8, 2, 16, 0, [5], 6, rot=8, rotary_interleaved=1,
     quant=('PER_TENSOR', 4))
case('q8_f16_decode', 1, 1, 4, 2, 16, 11, [11], 12, dt=np.float16, rot=8,
     quant=('PER_TENSOR', 8))
case('q4_f16_channel_prompt', 1, 4, 4, 2, 16, 0, [3], 4, dt=np.float16,
     quant=('PER_CHANNEL', 4))
case('q8_window_softcap', 1, 1, 4, 2, 16, 20, [20], 21, local_window_size=5, softcap=2.0,
     quant=('PER_CHANNEL', 8))
# a local window over right-padded prompts (issue 34, a generated decoder of batch 2): a padding
# row past its batch's total sees the keys from its own position - window up to the total, none
# (zeros) when that range is empty, as ONNX Runtime 1.30 computes it
case('window_prompt_b2_padded', 2, 6, 4, 2, 16, None, [5, 2], 6, local_window_size=3)
case('f16_window_rotary_prompt_b3_padded', 3, 7, 4, 1, 16, 0, [6, 1, 3], 7, dt=np.float16,
     rot=8, local_window_size=2)
# ... but with softcap (and smooth_softmax, qk_output) ONNX Runtime's float path counts the
# window back from the total, as its float16 one does
case('window_softcap_prompt_b2_padded', 2, 7, 2, 1, 16, None, [6, 3], 7, local_window_size=3,
     softcap=2.0)
case('window_smooth_prompt_b2_padded', 2, 7, 2, 1, 16, None, [6, 3], 7, local_window_size=3,
     smooth_softmax=1)
