#!/usr/bin/python3
"""Tiny decoders from tests/gen_decoder_unseen.py (not bench/gen_decoder.py) with ONNX Runtime
1.30's outputs (../shared/oracle), written to tests/decoder/u34_<variant>/ in the layout
tests/gen_cases_decoder.py writes (tests/python/test_decoder.py runs every folder there, fast
mode at 1 and 2 threads, exact mode): test_data_set_0, a prompt of batch 2 right-padded to 7
tokens (lengths 7 and 4; the Optimum variant 6 and 6: its mask has no right padding) with empty
pasts; test_data_set_1, one decode step (each batch's greedy token at its own length, the
presents fed back). The variants cover what tests/decoder's others do not: MatMulNBits 8 and 2
bits, blocks 16 and 64, float zero points, a bias input, K under the block; local window,
softcap, q/k/v bias; int4 GatherBlockQuantized on axis 0, RotaryEmbedding nodes interleaved,
SkipSimplifiedLayerNormalization with bias, Phi-3's gate_up; float16 with packed QKV; an
Optimum-style graph of plain ops.
usage: /usr/bin/python3 tests/gen_cases_decoder_unseen.py
"""
import json
import os
import shutil
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..',
                                                                            'shared')), 'oracle'))
sys.path.insert(0, HERE)
from mkcase import ort_run  # noqa: E402
import gen_decoder_unseen as gdu  # noqa: E402
from gen_cases_decoder import write_set  # noqa: E402

OUT = os.path.join(HERE, 'decoder')
TINY = dict(layers=2, nh=2, kvh=1, D=48, inter=45, vocab=97, max_len=64, seed=11)
VARIANTS = {
    'u34_m8_b16_bias': dict(bits=8, block=16, mbias=True),
    'u34_m2_b64_fzp_window_softcap': dict(bits=2, block=64, zp='float', window=3, softcap=2.0,
                                          qkv_bias=True),
    'u34_gbq_int4_rope_node_gateup': dict(embed='gbq', gbq_type='int4', gbq_qaxis=0,
                                          gbq_block=16, rope='node', inter_rot=1,
                                          ssln_bias=True, gateup=True, D=32, block=32),
    'u34_fp16_packed_window': dict(dtype='fp16', qkv='packed', qkv_bias=True, window=2,
                                   block=128, zp='none', D=48),
    'u34_optimum': dict(nh=4, kvh=2, D=16, block=16, optimum=True),
}


def case(name, cfg):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    c = dict(gdu.DEF)
    c.update(TINY)
    c.update(cfg)
    opt = c.pop('optimum', False)
    m = (gdu.O if opt else gdu.G)(c).build()
    path = os.path.join(d, 'model.onnx')
    onnx.save(m, path)
    lens = [6, 6] if opt else [7, 4]
    B, S = len(lens), max(lens)
    rng = np.random.default_rng(5)
    ids = rng.integers(0, c['vocab'], size=(B, S))
    fdt = np.float16 if c['dtype'] == 'fp16' else np.float32
    names = [i.name for i in m.graph.input]
    past = {n: np.zeros((B, c['kvh'], 0, c['D']), fdt) for n in names
            if n.startswith('past_key_values.')}

    def feeds(tokens, pos, width):
        f = {'input_ids': tokens,
             'attention_mask': np.array([[int(i < n) for i in range(width)] for n in lens],
                                        np.int64),
             'position_ids': pos}
        f.update(past)
        return {n: f[n] for n in names}

    for b, n in enumerate(lens):
        ids[b, n:] = 0
    f0 = feeds(ids, np.array([[min(s, n - 1) for s in range(S)] for n in lens], np.int64), S)
    o0 = ort_run(path, f0)
    write_set(d, 0, m, f0, o0)
    outs = dict(zip([o.name for o in m.graph.output], o0))
    past = {n: outs[n.replace('past_key_values.', 'present.')] for n in past}
    tok = [int(np.argmax(outs['logits'][b, n - 1])) for b, n in enumerate(lens)]
    pos = np.array([[n] for n in lens], np.int64)
    lens = [n + 1 for n in lens]
    f1 = feeds(np.array(tok, np.int64)[:, None], pos, S + 1)
    o1 = ort_run(path, f1)
    write_set(d, 1, m, f1, o1)
    print(name, os.path.getsize(path), 'bytes, next tokens', tok,
          [int(np.argmax(o1[0][b, -1])) for b in range(B)], json.dumps(cfg))


def main():
    for name, cfg in VARIANTS.items():
        case(name, cfg)


if __name__ == '__main__':
    main()
