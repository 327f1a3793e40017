#!/usr/bin/python3
"""Writes a small decoder-only LLM in ONNX Runtime GenAI's model-builder format, with random
weights of realistic scale (no training): what `builder.py -e cpu -p int4` emits for a
Llama-style model, shrunk.

    /usr/bin/python3 bench/gen_decoder.py OUT.onnx [--layers 2] [--hidden 256] [--heads 8]
        [--kv-heads 2] [--vocab 1024] [--inter 512] [--max-len 2048] [--block 32]
        [--bits 4|8] [--accuracy-level 0|4] [--qkv separate|packed] [--rope gqa|node] [--embed gather|gbq]
        [--dtype fp32|fp16] [--attention gqa|onnx] [--symmetric] [--tied] [--seed 0]

Graph (names as the builder's): inputs input_ids int64 [batch_size, sequence_length],
attention_mask int64 [batch_size, total_sequence_length], (position_ids with --rope node),
past_key_values.N.key/value [batch_size, kv_heads, past_sequence_length, head_size]; outputs
logits [batch_size, sequence_length, vocab], present.N.key/value [batch_size, kv_heads,
total_sequence_length, head_size].
  embedding: Gather of a float table (--embed gather) or com.microsoft GatherBlockQuantized of
    a 4-bit uint8 table, block 32 (--embed gbq, as the builder's int4 embeddings)
  attention-mask subgraph: seqlens_k = Cast<int32>(ReduceSum(attention_mask, 1) - 1),
    total_sequence_length = Cast<int32>(Gather(Shape(attention_mask), 1))
  per layer: SimplifiedLayerNormalization (layer 0) or SkipSimplifiedLayerNormalization (the
    residual through output 3); q/k/v MatMulNBits (4-bit (--bits 8: 8-bit codes), block 32,
    zero points packed uint8;
    --qkv packed: one qkv_proj whose output GQA splits); GroupQueryAttention (do_rotary=1 with
    cos/sin caches [max_len, head_size / 2]; --rope node: com.microsoft RotaryEmbedding on q
    and k with position_ids, GQA with do_rotary=0); o_proj; SkipSimplifiedLayerNormalization;
    SiLU MLP (gate/up/down MatMulNBits, Sigmoid * gate * up)
  final SkipSimplifiedLayerNormalization, lm_head MatMulNBits -> logits (--tied: lm_head reads
    the GatherBlockQuantized table, uint8 [vocab, hidden / 2], as tied exports share it,
    through a Reshape to MatMulNBits' [vocab, blocks, block / 2], which ONNX Runtime requires)
--attention onnx replaces GroupQueryAttention by ONNX's Attention-23 (past/present, is_causal,
grouped KV heads) after com.microsoft RotaryEmbedding nodes (position_ids input): the same
function through ONNX's own op (a cross-check of GroupQueryAttention, which omopt runs too, and
a model for runtimes without it). --dtype fp16: activations, norms, scales, caches and KV cache
in float16 (opset imports 21 / com.microsoft 1; 23 with --attention onnx).
The model's metadata_props hold the shape parameters as JSON under "decoder" (decode_bench.py
reads them).
"""
import argparse
import json
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP


class Builder:
    def __init__(self, a):
        self.a = a
        self.rng = np.random.default_rng(a.seed)
        self.nodes, self.inits = [], []
        self.fdt = np.float16 if a.dtype == 'fp16' else np.float32
        self.ftp = TP.FLOAT16 if a.dtype == 'fp16' else TP.FLOAT
        self.head = a.hidden // a.heads
        self.consts = {}

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def const_i64(self, v, scalar=False):
        key = ('i64', v, scalar)
        if key not in self.consts:
            name = '/model/constants/TensorProto.INT64/%s/%s' % ('0D' if scalar else '1D', v)
            self.consts[key] = self.init(name, np.array(v if scalar else [v], np.int64))
        return self.consts[key]

    def node(self, op, ins, outs, name, domain='', **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def quant4(self, w):
        """w [K, N] float -> (B uint8 [N, kb, block * bits / 8], scales [N * kb], zp packed
        [N * ceil(kb * bits / 8)] or None): ONNX Runtime's MatMulNBits quantizer layout
        (blockwise along K per column; asymmetric min/max with a zero point, or symmetric
        around 2^(bits - 1)), bits = --bits (4 or 8)."""
        bs, bits = self.a.block, self.a.bits
        top, mid = (1 << bits) - 1, 1 << (bits - 1)
        K, N = w.shape
        kb = -(-K // bs)
        wp = np.zeros((kb * bs, N), np.float32)
        wp[:K] = w
        blk = wp.T.reshape(N, kb, bs)
        if self.a.symmetric:
            amax = np.abs(blk).max(axis=2)
            scale = np.where(amax > 0, amax / (mid - 1), 1.0)
            zp = np.full((N, kb), mid, np.int64)
        else:
            lo = np.minimum(blk.min(axis=2), 0)
            hi = np.maximum(blk.max(axis=2), 0)
            scale = np.where(hi > lo, (hi - lo) / top, 1.0)
            zp = np.clip(np.round(-lo / scale), 0, top).astype(np.int64)
        q = np.clip(np.round(blk / scale[..., None]) + zp[..., None], 0, top).astype(np.uint8)
        packed = q if bits == 8 else (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
        zpk = None
        if not self.a.symmetric and bits == 8:
            zpk = zp.astype(np.uint8).reshape(-1)
        elif not self.a.symmetric:
            z = np.concatenate([zp, np.zeros((N, kb % 2), np.int64)], axis=1).astype(np.uint8)
            zpk = (z[:, 0::2] | (z[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
        return packed, scale.astype(self.fdt).reshape(-1), zpk

    def matmul4(self, x, K, N, base, std=None):
        w = self.rng.standard_normal((K, N)).astype(np.float32) * (std or K ** -0.5)
        b, s, z = self.quant4(w)
        ins = [x, self.init(base + '.weight.quant', b), self.init(base + '.weight.scales', s)]
        if z is not None:
            ins.append(self.init(base + '.weight.zp', z))
        attrs = dict(K=K, N=N, bits=self.a.bits, block_size=self.a.block)
        if self.a.accuracy_level:
            attrs['accuracy_level'] = self.a.accuracy_level
        return self.node('MatMulNBits', ins, [base + '/MatMulNBits/output_0'],
                         base + '/MatMulNBits', 'com.microsoft', **attrs)

    def norm_weight(self, name):
        return self.init(name, (1.0 + 0.1 * self.rng.standard_normal(self.a.hidden))
                         .astype(self.fdt))

    def skip_norm(self, x, skip, wname, base, last=False):
        outs = [base + '/output_0', '', '', base + '/output_3'] if not last else [base + '/out']
        r = self.node('SkipSimplifiedLayerNormalization', [x, skip, self.norm_weight(wname)],
                      outs, base, 'com.microsoft', epsilon=1e-5)
        return (r, None) if last else (r[0], r[3])

    def embedding(self):
        a = self.a
        table = (self.rng.standard_normal((a.vocab, a.hidden)) * 0.5).astype(np.float32)
        if a.embed == 'gather':
            self.init('model.embed_tokens.weight', table.astype(self.fdt))
            return self.node('Gather', ['model.embed_tokens.weight', 'input_ids'],
                             ['/model/embed_tokens/Gather/output_0'],
                             '/model/embed_tokens/Gather')
        b, s, z = self.quant4(table.T)  # the table's rows quantized along hidden
        ins = ['input_ids']
        data = self.init('model.embed_tokens.qweight', b.reshape(a.vocab, -1))
        kb = -(-a.hidden // a.block)
        sc = self.init('model.embed_tokens.scales', s.reshape(a.vocab, kb))
        ins = [data, 'input_ids', sc]
        if z is not None:
            ins.append(self.init('model.embed_tokens.zero_points', z.reshape(a.vocab, -1)))
        return self.node('GatherBlockQuantized', ins,
                         ['/model/embed_tokens/GatherBlockQuantized/output_0'],
                         '/model/embed_tokens/GatherBlockQuantized', 'com.microsoft',
                         bits=a.bits, block_size=a.block, gather_axis=0, quantize_axis=1)

    def mask_subgraph(self):
        base = '/model/attn_mask_reformat/attn_mask_subgraph'
        rs = self.node('ReduceSum', ['attention_mask', self.const_i64(1)],
                       [base + '/ReduceSum/output_0'], base + '/ReduceSum', keepdims=0)
        sub = self.node('Sub', [rs, self.const_i64(1, True)], [base + '/Sub/output_0'],
                        base + '/Sub')
        seqlens = self.node('Cast', [sub], [base + '/Sub/Cast/output_0'], base + '/Sub/Cast',
                            to=TP.INT32)
        shp = self.node('Shape', ['attention_mask'], [base + '/Shape/output_0'],
                        base + '/Shape')
        g = self.node('Gather', [shp, self.const_i64(1, True)], [base + '/Gather/output_0'],
                      base + '/Gather', axis=0)
        total = self.node('Cast', [g], [base + '/Gather/Cast/output_0'],
                          base + '/Gather/Cast', to=TP.INT32)
        return seqlens, total

    def rope_caches(self):
        a = self.a
        inv = 1.0 / (10000.0 ** (np.arange(0, self.head, 2, dtype=np.float32) / self.head))
        t = np.arange(a.max_len, dtype=np.float32)
        f = np.outer(t, inv)
        self.init('cos_cache', np.cos(f).astype(self.fdt))
        self.init('sin_cache', np.sin(f).astype(self.fdt))

    def rotary(self, x, heads, base):
        return self.node('RotaryEmbedding', [x, 'position_ids', 'cos_cache', 'sin_cache'],
                         [base + '/output_0'], base, 'com.microsoft', interleaved=0,
                         num_heads=heads)

    def attention(self, i, x, seqlens, total):
        a, D = self.a, self.head
        base = '/model/layers.%d/attn' % i
        qn, kvn = a.heads * D, a.kv_heads * D
        if a.qkv == 'packed':
            qkv = self.matmul4(x, a.hidden, qn + 2 * kvn, base + '/qkv_proj')
            q, k, v = qkv, '', ''
        else:
            q = self.matmul4(x, a.hidden, qn, base + '/q_proj')
            k = self.matmul4(x, a.hidden, kvn, base + '/k_proj')
            v = self.matmul4(x, a.hidden, kvn, base + '/v_proj')
        pk, pv = 'past_key_values.%d.key' % i, 'past_key_values.%d.value' % i
        outs = [base + '/attn/output_0', 'present.%d.key' % i, 'present.%d.value' % i]
        separate = a.rope == 'node' or a.attention == 'onnx'
        if separate:
            if a.qkv == 'packed':
                q, k, v = self.node('Split', [qkv, self.init(base + '/split_sizes', np.array(
                    [qn, kvn, kvn], np.int64))], [base + '/Split/output_%d' % j
                                                  for j in range(3)], base + '/Split', axis=-1)
            q = self.rotary(q, a.heads, base + '/q_rotary')
            k = self.rotary(k, a.kv_heads, base + '/k_rotary')
        if a.attention == 'onnx':
            self.node('Attention', [q, k, v, '', pk, pv], outs, base + '/Attention',
                      q_num_heads=a.heads, kv_num_heads=a.kv_heads, is_causal=1,
                      scale=float(D ** -0.5))
        else:
            ins = [q, k, v, pk, pv, seqlens, total]
            if not separate:
                ins += ['cos_cache', 'sin_cache']
            self.node('GroupQueryAttention', ins, outs, base + '/GroupQueryAttention',
                      'com.microsoft', num_heads=a.heads, kv_num_heads=a.kv_heads,
                      scale=float(D ** -0.5), local_window_size=-1,
                      do_rotary=0 if separate else 1, rotary_interleaved=0)
        return self.matmul4(outs[0], qn, a.hidden, base + '/o_proj')

    def mlp(self, i, x):
        a = self.a
        base = '/model/layers.%d/mlp' % i
        gate = self.matmul4(x, a.hidden, a.inter, base + '/gate_proj')
        up = self.matmul4(x, a.hidden, a.inter, base + '/up_proj')
        sig = self.node('Sigmoid', [gate], [base + '/act_fn/Sigmoid/output_0'],
                        base + '/act_fn/Sigmoid')
        act = self.node('Mul', [gate, sig], [base + '/act_fn/Mul/output_0'],
                        base + '/act_fn/Mul')
        prod = self.node('Mul', [act, up], [base + '/Mul/output_0'], base + '/Mul')
        return self.matmul4(prod, a.inter, a.hidden, base + '/down_proj')

    def build(self):
        a = self.a
        x = self.embedding()
        seqlens, total = self.mask_subgraph()
        self.rope_caches()
        res = x
        x = self.node('SimplifiedLayerNormalization', [x, self.norm_weight(
            'model.layers.0.input_layernorm.weight')], ['/model/layers.0/input_layernorm/out'],
            '/model/layers.0/input_layernorm/LayerNorm', axis=-1, epsilon=1e-5)
        for i in range(a.layers):
            if i > 0:
                x, res = self.skip_norm(x, res, 'model.layers.%d.input_layernorm.weight' % i,
                                        '/model/layers.%d/input_layernorm/SkipLayerNorm' % i)
            attn = self.attention(i, x, seqlens, total)
            x, res = self.skip_norm(attn, res,
                                    'model.layers.%d.post_attention_layernorm.weight' % i,
                                    '/model/layers.%d/post_attention_layernorm/SkipLayerNorm'
                                    % i)
            x = self.mlp(i, x)
        x, _ = self.skip_norm(x, res, 'model.norm.weight',
                              '/model/layers.%d/final_norm_layernorm/SkipLayerNorm' % a.layers,
                              last=True)
        if a.tied:  # lm_head reads the embedding's 4-bit table (tied word embeddings)
            emb = self.nodes[0].input
            attrs = dict(K=a.hidden, N=a.vocab, bits=a.bits, block_size=a.block)
            if a.accuracy_level:
                attrs['accuracy_level'] = a.accuracy_level
            kb = -(-a.hidden // a.block)
            b = self.node('Reshape', [emb[0], self.init('/lm_head/B_shape', np.array(
                [a.vocab, kb, a.block * a.bits // 8], np.int64))], ['/lm_head/B'], '/lm_head/Reshape')
            self.node('MatMulNBits', [x, b, emb[2]] + emb[3:], ['logits'],
                      '/lm_head/MatMulNBits', 'com.microsoft', **attrs)
        else:
            self.matmul4(x, a.hidden, a.vocab, '/lm_head', std=4 * a.hidden ** -0.5)
            self.nodes[-1].output[0] = 'logits'
        logits = 'logits'
        return self.model(logits)

    def model(self, logits):
        a, D = self.a, self.head
        ins = [helper.make_tensor_value_info('input_ids', TP.INT64,
                                             ['batch_size', 'sequence_length']),
               helper.make_tensor_value_info('attention_mask', TP.INT64,
                                             ['batch_size', 'total_sequence_length'])]
        if a.rope == 'node' or a.attention == 'onnx':
            ins.append(helper.make_tensor_value_info('position_ids', TP.INT64,
                                                     ['batch_size', 'sequence_length']))
        outs = [helper.make_tensor_value_info('logits', self.ftp,
                                              ['batch_size', 'sequence_length', a.vocab])]
        for i in range(a.layers):
            for kv in ('key', 'value'):
                ins.append(helper.make_tensor_value_info(
                    'past_key_values.%d.%s' % (i, kv), self.ftp,
                    ['batch_size', a.kv_heads, 'past_sequence_length', D]))
                outs.append(helper.make_tensor_value_info(
                    'present.%d.%s' % (i, kv), self.ftp,
                    ['batch_size', a.kv_heads, 'total_sequence_length', D]))
        g = helper.make_graph(self.nodes, 'main_graph', ins, outs, initializer=self.inits)
        opset = 23 if a.attention == 'onnx' else 21
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset),
                                                helper.make_opsetid('com.microsoft', 1)],
                              producer_name='omopt bench/gen_decoder.py')
        m.ir_version = 10
        meta = dict(layers=a.layers, hidden=a.hidden, heads=a.heads, kv_heads=a.kv_heads,
                    head_size=D, vocab=a.vocab, max_len=a.max_len, dtype=a.dtype,
                    position_ids=a.rope == 'node' or a.attention == 'onnx')
        helper.set_model_props(m, {'decoder': json.dumps(meta)})
        return m


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('out')
    p.add_argument('--layers', type=int, default=2)
    p.add_argument('--hidden', type=int, default=256)
    p.add_argument('--heads', type=int, default=8)
    p.add_argument('--kv-heads', type=int, default=2)
    p.add_argument('--vocab', type=int, default=1024)
    p.add_argument('--inter', type=int, default=None, help='MLP width (default 2.75 x hidden)')
    p.add_argument('--max-len', type=int, default=2048)
    p.add_argument('--block', type=int, default=32)
    p.add_argument('--bits', type=int, default=4, choices=(4, 8), help='MatMulNBits codes')
    p.add_argument('--accuracy-level', type=int, default=0, choices=(0, 1, 2, 3, 4))
    p.add_argument('--qkv', default='separate', choices=('separate', 'packed'))
    p.add_argument('--rope', default='gqa', choices=('gqa', 'node'))
    p.add_argument('--embed', default='gather', choices=('gather', 'gbq'))
    p.add_argument('--dtype', default='fp32', choices=('fp32', 'fp16'))
    p.add_argument('--attention', default='gqa', choices=('gqa', 'onnx'))
    p.add_argument('--tied', action='store_true',
                   help='lm_head reads the embedding table (needs --embed gbq)')
    p.add_argument('--symmetric', action='store_true', help='weights without zero points')
    p.add_argument('--seed', type=int, default=0)
    a = p.parse_args(argv)
    if a.inter is None:
        a.inter = (a.hidden * 11 // 4 + a.block - 1) // a.block * a.block
    if a.tied and a.embed != 'gbq':
        p.error('--tied needs --embed gbq')
    if a.hidden % a.heads or a.heads % a.kv_heads:
        p.error('hidden must be a multiple of heads, heads of kv-heads')
    return a


def main(argv=None):
    a = parse(argv if argv is not None else sys.argv[1:])
    m = Builder(a).build()
    onnx.save(m, a.out)
    return m


if __name__ == '__main__':
    main()
