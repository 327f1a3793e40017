#!/usr/bin/python3
"""Tiny decoders (2 layers, bench/gen_decoder.py, ONNX Runtime GenAI's format) with ONNX
Runtime's outputs (../shared/oracle), written to tests/decoder/<variant>/: model.onnx,
test_data_set_0 (the prompt: 7 tokens, empty past) and test_data_set_1 (one decode step: the
prompt's greedy token, its presents as the pasts), input_N.pb / output_N.pb in graph order.
tests/python/test_decoder.py runs every variant in omopt (fast and exact mode).

Variants: gqa (separate q/k/v, GroupQueryAttention with do_rotary), gqa_packed (one qkv_proj),
gqa_rope_node (RotaryEmbedding nodes, position_ids, do_rotary 0), gqa_gbq (GatherBlockQuantized
embeddings), gqa_acc4 (accuracy_level 4: its outputs are ONNX Runtime's for the same model at
accuracy_level 0, exact arithmetic, since level 4 lets ONNX Runtime quantize activations to
int8), gqa_8bit and gqa_acc4_8bit (MatMulNBits with 8-bit codes, at levels 0 and 4), gqa_fp16,
onnx_attention and onnx_attention_fp16 (ONNX Attention-23 instead of GQA).
usage: /usr/bin/python3 tests/gen_cases_decoder.py
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..',
                                                                            'shared')), 'oracle'))
sys.path.insert(0, os.path.join(HERE, '..', 'bench'))
from mkcase import ort_run  # noqa: E402
import gen_decoder  # noqa: E402

OUT = os.path.join(HERE, 'decoder')
TINY = ['--layers', '2', '--hidden', '64', '--heads', '4', '--kv-heads', '2', '--vocab', '128',
        '--inter', '96', '--max-len', '64', '--seed', '7']
VARIANTS = {
    'gqa': [],
    'gqa_packed': ['--qkv', 'packed'],
    'gqa_rope_node': ['--rope', 'node'],
    'gqa_gbq': ['--embed', 'gbq'],
    'gqa_acc4': ['--accuracy-level', '4'],
    'gqa_fp16': ['--dtype', 'fp16'],
    'gqa_8bit': ['--bits', '8'],
    'gqa_acc4_8bit': ['--accuracy-level', '4', '--bits', '8'],
    'onnx_attention': ['--attention', 'onnx'],
    'onnx_attention_fp16': ['--attention', 'onnx', '--dtype', 'fp16'],
}
PROMPT = [5, 77, 3, 120, 64, 9, 31]


def feeds(m, tokens, past, past_len):
    names = [i.name for i in m.graph.input]
    f = {'input_ids': np.array([tokens], np.int64),
         'attention_mask': np.ones((1, past_len + len(tokens)), np.int64)}
    if 'position_ids' in names:
        f['position_ids'] = np.arange(past_len, past_len + len(tokens), dtype=np.int64)[None]
    f.update((n, past[n]) for n in names if n.startswith('past_key_values.'))
    return {n: f[n] for n in names}  # graph order


def write_set(d, k, m, ins, outs):
    ds = os.path.join(d, 'test_data_set_%d' % k)
    os.makedirs(ds)
    for i, (name, arr) in enumerate(ins.items()):
        open(os.path.join(ds, 'input_%d.pb' % i), 'wb').write(
            numpy_helper.from_array(np.asarray(arr), name).SerializeToString())
    for i, (o, arr) in enumerate(zip(m.graph.output, outs)):
        open(os.path.join(ds, 'output_%d.pb' % i), 'wb').write(
            numpy_helper.from_array(np.asarray(arr), o.name).SerializeToString())


def case(name, extra):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    path = os.path.join(d, 'model.onnx')
    m = gen_decoder.main([path] + TINY + extra)
    ref_path = path
    with tempfile.TemporaryDirectory() as tmp:
        if '--accuracy-level' in extra:  # the reference: the same weights at level 0
            ref_path = os.path.join(tmp, 'ref.onnx')
            gen_decoder.main([ref_path] + TINY + [a for a in extra if a not in
                                                   ('--accuracy-level', '4')])
        meta = next(p.value for p in m.metadata_props if p.key == 'decoder')
        meta = json.loads(meta)
        fdt = np.float16 if meta['dtype'] == 'fp16' else np.float32
        past = {'past_key_values.%d.%s' % (i, kv): np.zeros((1, meta['kv_heads'], 0,
                                                              meta['head_size']), fdt)
                for i in range(meta['layers']) for kv in ('key', 'value')}
        f0 = feeds(m, PROMPT, past, 0)
        o0 = ort_run(ref_path, f0)
        write_set(d, 0, m, f0, o0)
        outs = dict(zip([o.name for o in m.graph.output], o0))
        past = {n: outs[n.replace('past_key_values.', 'present.')] for n in past}
        tok = int(np.argmax(outs['logits'][0, -1]))
        f1 = feeds(m, [tok], past, len(PROMPT))
        o1 = ort_run(ref_path, f1)
        write_set(d, 1, m, f1, o1)
    print(name, os.path.getsize(path), 'bytes, next tokens', tok,
          int(np.argmax(o1[0][0, -1])))


def main():
    for name, extra in VARIANTS.items():
        case(name, extra)


if __name__ == '__main__':
    main()
