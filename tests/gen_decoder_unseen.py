#!/usr/bin/python3
"""Small decoders as ONNX Runtime GenAI's model builder and Optimum export them, written apart
from bench/gen_decoder.py (issue 34: decoders we have not seen) to vary what that generator
keeps fixed: MatMulNBits bits 2/4/8, block sizes 16-256 (K not a multiple of the block: a padded
last block), zero points packed uint8, float or absent, 1-D or 2-D scales and zero points, a
bias input, accuracy_level; GroupQueryAttention head counts and sizes, local_window_size,
softcap, scale, smooth_softmax, rotary (interleaved, partial) inside it or as RotaryEmbedding
nodes, packed QKV, a q/k/v bias Add (Qwen); GatherBlockQuantized uint8 (bits 4) or int4/uint4
with quantize_axis 0 or 1; SkipSimplifiedLayerNormalization with a bias input; Phi-3's one
gate_up projection; float32 or float16. Optimum (class O): RMSNorm, rotate_half rotary, the
causal and padding mask, repeat_kv and attention from plain ONNX ops, the past concatenated.
Random codes and scales (no training). The config is the model's metadata_props "u34".
usage: gen_decoder_unseen.py OUT.onnx ['JSON config'] [--optimum]
tests/gen_cases_decoder_unseen.py writes the suite's cases from it.
"""
import json
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto as TP

DEF = dict(dtype='fp32', layers=2, nh=4, kvh=2, D=64, inter=173, vocab=251, max_len=256,
           bits=4, block=32, zp='packed', mbias=False, acc=0, qkv='separate', qkv_bias=False,
           rope='gqa', inter_rot=0, window=-1, softcap=0.0, scale=0.0, smooth=0,
           embed='gather', gbq_type='uint8', gbq_block=32, gbq_qaxis=1, gbq_zp=True,
           eps=1e-6, eps2=1e-5, seed=0, lm_bits=None, rd=None, shapes2d=False,
           ssln_bias=False, gateup=False, ids32=False, lm2d=False)


class G:
    def __init__(s, c):
        s.c = c
        s.rng = np.random.default_rng(c['seed'])
        s.nodes, s.inits, s.n = [], [], 0
        s.fdt = np.float16 if c['dtype'] == 'fp16' else np.float32
        s.ftp = TP.FLOAT16 if c['dtype'] == 'fp16' else TP.FLOAT

    def init(s, name, a):
        s.inits.append(numpy_helper.from_array(np.asarray(a), name))
        return name

    def node(s, op, ins, nout=1, dom='', outs=None, **kw):
        s.n += 1
        outs = outs or ['%s_%d_o%d' % (op, s.n, i) for i in range(nout)]
        s.nodes.append(helper.make_node(op, ins, outs, name='%s_%d' % (op, s.n), domain=dom, **kw))
        return outs if nout > 1 else outs[0]

    def mnb(s, x, K, N, name, bits=None, bias=False):
        c, r = s.c, s.rng
        bits = bits or c['bits']
        bs = c['block']
        kb = (K + bs - 1) // bs
        codes = r.integers(0, 2 ** bits, size=(N, kb * bs))
        per = 8 // bits
        blob = codes.reshape(N, kb, bs // per, per)
        packed = np.zeros((N, kb, bs // per), np.int64)
        for j in range(per):
            packed |= blob[..., j] << (bits * j)
        ins = [x, s.init(name + '.q', packed.astype(np.uint8))]
        mid = 2 ** (bits - 1)
        scale = (r.uniform(0.5, 1.5, size=(N, kb)) * 2.0 / (np.sqrt(K) * mid)).astype(s.fdt)
        ins.append(s.init(name + '.s', scale if c['shapes2d'] else scale.reshape(-1)))
        if c['zp'] == 'packed':
            z = r.integers(max(mid - 2, 0), min(mid + 2, 2 ** bits), size=(N, kb))
            zb = (kb + per - 1) // per
            zz = np.zeros((N, zb * per), np.int64)
            zz[:, :kb] = z
            zz = zz.reshape(N, zb, per)
            zp = np.zeros((N, zb), np.int64)
            for j in range(per):
                zp |= zz[..., j] << (bits * j)
            zp = zp.astype(np.uint8)
            ins.append(s.init(name + '.zp', zp if c['shapes2d'] else zp.reshape(-1)))
        elif c['zp'] == 'float':
            z = r.uniform(mid - 1.5, mid + 1.5, size=(N, kb)).astype(s.fdt)
            ins.append(s.init(name + '.zp', z if c['shapes2d'] else z.reshape(-1)))
        else:
            ins.append('')
        if bias:
            ins += ['', s.init(name + '.b', (r.standard_normal(N) * 0.1).astype(s.fdt))]
        while ins[-1] == '':
            ins.pop()
        return s.node('MatMulNBits', ins, dom='com.microsoft', K=K, N=N, bits=bits,
                      block_size=bs, accuracy_level=c['acc'])

    def sb(s, H):
        if not s.c['ssln_bias']:
            return []
        return [s.init('sslnb%d' % s.n, (0.1 * s.rng.standard_normal(H)).astype(s.fdt))]

    def embed(s, ids, V, H):
        c, r = s.c, s.rng
        if c['embed'] == 'gather':
            t = (r.standard_normal((V, H))).astype(s.fdt)
            return s.node('Gather', [s.init('embed', t), ids], axis=0)
        bs = c['gbq_block']
        qa = c['gbq_qaxis']
        if c['gbq_type'] == 'uint8':  # uint8 holds two 4-bit codes, quantize_axis last only
            kb = (H + bs - 1) // bs
            codes = r.integers(0, 16, size=(V, H))
            packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
            sc = (r.uniform(0.1, 0.3, size=(V, kb))).astype(s.fdt)
            ins = [s.init('embed.q', packed), ids, s.init('embed.s', sc)]
            if c['gbq_zp']:
                z = r.integers(6, 10, size=(V, kb))
                if kb % 2:
                    z = np.concatenate([z, np.zeros((V, 1), np.int64)], axis=1)
                ins.append(s.init('embed.zp', (z[:, 0::2] | (z[:, 1::2] << 4)).astype(np.uint8)))
            return s.node('GatherBlockQuantized', ins, dom='com.microsoft', bits=4, block_size=bs,
                          gather_axis=0, quantize_axis=1)
        # int4 / uint4 tensor type, quantize along axis qa of [V, H]
        signed = c['gbq_type'] == 'int4'
        lo, hi = (-8, 8) if signed else (0, 16)
        codes = r.integers(lo, hi, size=(V, H))
        shp = [V, H]
        shp_s = list(shp)
        shp_s[qa] = (shp[qa] + bs - 1) // bs
        sc = r.uniform(0.1, 0.3, size=shp_s).astype(s.fdt)
        tp = 22 if signed else 21  # INT4 / UINT4 (onnx 1.12 has no names for them)

        def i4(name, shape, v):
            v = (v.reshape(-1) & 15).astype(np.uint8)
            if v.size % 2:
                v = np.concatenate([v, np.zeros(1, np.uint8)])
            t = onnx.TensorProto()
            t.name, t.data_type = name, tp
            t.dims.extend(shape)
            t.raw_data = (v[0::2] | (v[1::2] << 4)).tobytes()
            s.inits.append(t)
        i4('embed.q', shp, codes)
        ins = ['embed.q', ids, s.init('embed.s', sc)]
        if c['gbq_zp']:
            z = r.integers(lo + 6, lo + 10, size=shp_s)
            i4('embed.zp', shp_s, z)
            ins.append('embed.zp')
        return s.node('GatherBlockQuantized', ins, dom='com.microsoft', bits=4, block_size=bs,
                      gather_axis=0, quantize_axis=qa)

    def build(s):
        c, r = s.c, s.rng
        nh, kvh, D = c['nh'], c['kvh'], c['D']
        H = nh * D
        V, I, L = c['vocab'], c['inter'], c['layers']
        rd = c['rd'] or D
        ids = 'input_ids'
        if c['ids32']:
            ids = s.node('Cast', [ids], to=TP.INT32)
        x = s.embed(ids, V, H)
        # attention-mask subgraph as the model builder writes it
        rs = s.node('ReduceSum', ['attention_mask', s.init('ax1', np.array([1], np.int64))],
                    keepdims=0)
        sub = s.node('Sub', [rs, s.init('one64', np.array(1, np.int64))])
        seqlens = s.node('Cast', [sub], to=TP.INT32)
        shp = s.node('Shape', ['attention_mask'])
        tot = s.node('Gather', [shp, s.init('idx1', np.array(1, np.int64))], axis=0)
        total = s.node('Cast', [tot], to=TP.INT32)
        inv = 1.0 / (10000 ** (np.arange(0, rd, 2) / rd))
        ang = np.arange(c['max_len'])[:, None] * inv[None]
        cos = s.init('cos_cache', np.cos(ang).astype(s.fdt))
        sin = s.init('sin_cache', np.sin(ang).astype(s.fdt))
        gam = lambda n: s.init(n, (1 + 0.1 * r.standard_normal(H)).astype(s.fdt))  # noqa
        residual, h = x, None
        inputs, outputs = [], []
        mlp = None
        aux = []
        for l in range(L):
            if l == 0:
                h, isv = s.node('SimplifiedLayerNormalization', [x, gam('ln%d' % l)], nout=2,
                                axis=-1, epsilon=c['eps'], stash_type=1)
                aux.append(isv)
            else:
                h, _m, isv, residual = s.node('SkipSimplifiedLayerNormalization',
                                              [mlp, residual, gam('ln%d' % l)] + s.sb(H), nout=4,
                                              dom='com.microsoft', epsilon=c['eps2'])
            if c['qkv'] == 'packed':
                qkv = s.mnb(h, H, (nh + 2 * kvh) * D, 'l%d.qkv' % l, bias=c['mbias'])
                if c['qkv_bias']:
                    qkv = s.node('Add', [qkv, s.init('l%d.qkvb' % l, (0.1 * r.standard_normal(
                        (nh + 2 * kvh) * D)).astype(s.fdt))])
                q, k, v = qkv, '', ''
            else:
                q = s.mnb(h, H, nh * D, 'l%d.q' % l, bias=c['mbias'])
                k = s.mnb(h, H, kvh * D, 'l%d.k' % l, bias=c['mbias'])
                v = s.mnb(h, H, kvh * D, 'l%d.v' % l, bias=c['mbias'])
                if c['qkv_bias']:
                    q, k, v = [s.node('Add', [t, s.init('l%d.%sb' % (l, n), (0.1 * r.standard_normal(
                        w * D)).astype(s.fdt))]) for t, n, w in ((q, 'q', nh), (k, 'k', kvh),
                                                                (v, 'v', kvh))]
            ga = dict(num_heads=nh, kv_num_heads=kvh)
            if c['window'] > 0:
                ga['local_window_size'] = c['window']
            if c['softcap']:
                ga['softcap'] = c['softcap']
            if c['scale']:
                ga['scale'] = c['scale']
            if c['smooth']:
                ga['smooth_softmax'] = 1
            gin = [q, k, v, 'past_key_values.%d.key' % l, 'past_key_values.%d.value' % l,
                   seqlens, total]
            if c['rope'] == 'gqa':
                ga.update(do_rotary=1, rotary_interleaved=c['inter_rot'])
                gin += [cos, sin]
            elif c['rope'] == 'node':
                assert c['qkv'] == 'separate'
                gin[0] = s.node('RotaryEmbedding', [q, 'position_ids', cos, sin],
                                dom='com.microsoft', interleaved=c['inter_rot'], num_heads=nh,
                                **({'rotary_embedding_dim': rd} if rd != D else {}))
                gin[1] = s.node('RotaryEmbedding', [k, 'position_ids', cos, sin],
                                dom='com.microsoft', interleaved=c['inter_rot'], num_heads=kvh,
                                **({'rotary_embedding_dim': rd} if rd != D else {}))
            a = s.node('GroupQueryAttention', gin, nout=3, dom='com.microsoft',
                       outs=['attn%d' % l, 'present.%d.key' % l, 'present.%d.value' % l], **ga)
            o = s.mnb(a[0], H, H, 'l%d.o' % l, bias=c['mbias'])
            h, _m, isv, residual = s.node('SkipSimplifiedLayerNormalization',
                                          [o, residual, gam('pln%d' % l)] + s.sb(H), nout=4,
                                          dom='com.microsoft', epsilon=c['eps2'])
            if l == 0:
                aux.append(isv)
            if c['gateup']:  # Phi-3: one gate_up projection, halves by Slice
                gu = s.mnb(h, H, 2 * I, 'l%d.gate_up' % l, bias=c['mbias'])
                i64 = lambda v: s.init('c%d_%d' % (s.n, v), np.array([v], np.int64))  # noqa
                g = s.node('Slice', [gu, i64(0), i64(I), i64(-1)])
                u = s.node('Slice', [gu, i64(I), i64(2 * I), i64(-1)])
            else:
                g = s.mnb(h, H, I, 'l%d.gate' % l)
                u = s.mnb(h, H, I, 'l%d.up' % l, bias=c['mbias'])
            act = s.node('Mul', [g, s.node('Sigmoid', [g])])
            mlp = s.mnb(s.node('Mul', [act, u]), I, H, 'l%d.down' % l)
            for n in ('key', 'value'):
                inputs.append(helper.make_tensor_value_info('past_key_values.%d.%s' % (l, n),
                              s.ftp, ['batch', kvh, 'past', D]))
                outputs.append(helper.make_tensor_value_info('present.%d.%s' % (l, n), s.ftp,
                               ['batch', kvh, 'total', D]))
        hf = s.node('SkipSimplifiedLayerNormalization', [mlp, residual, gam('norm')], nout=1,
                    dom='com.microsoft', epsilon=c['eps'])
        lm_bits = c['lm_bits'] or c['bits']
        if c['lm2d']:  # lm_head on [B * S, H], then back to [B, S, V]
            shp3 = s.node('Shape', [hf])
            hf = s.node('Reshape', [hf, s.init('m1h', np.array([-1, H], np.int64))])
            lg2 = s.mnb(hf, H, V, 'lm_head', bits=lm_bits)
            two = s.node('Slice', [shp3, s.init('z0', np.array([0], np.int64)),
                                   s.init('z2', np.array([2], np.int64))])
            sh = s.node('Concat', [two, s.init('vv', np.array([V], np.int64))], axis=0)
            s.node('Reshape', [lg2, sh], outs=['logits'])
        else:
            s.mnb(hf, H, V, 'lm_head', bits=lm_bits)
            s.nodes[-1].output[0] = 'logits'
        for i, a in enumerate(aux):
            s.nodes.append(helper.make_node('Identity', [a], ['aux%d' % i]))
            outputs.append(helper.make_tensor_value_info('aux%d' % i, TP.FLOAT, None))
        ins = [helper.make_tensor_value_info('input_ids', TP.INT64, ['batch', 'seq']),
               helper.make_tensor_value_info('attention_mask', TP.INT64, ['batch', 'total'])]
        if c['rope'] == 'node':
            ins.append(helper.make_tensor_value_info('position_ids', TP.INT64, ['batch', 'seq']))
        outs = [helper.make_tensor_value_info('logits', s.ftp, ['batch', 'seq', V])] + outputs
        gr = helper.make_graph(s.nodes, 'u34', ins + inputs, outs, s.inits)
        m = helper.make_model(gr, opset_imports=[helper.make_opsetid('', 21),
                                                 helper.make_opsetid('com.microsoft', 1)])
        m.ir_version = 10
        m.metadata_props.add(key='u34', value=json.dumps(c))
        return m


class O(G):
    def c64(s, v):
        return s.init('k%d' % (s.n + len(s.inits)), np.array(v, np.int64))

    def rms(s, x, H, name):
        x2 = s.node('Pow', [x, s.init(name + '.two', np.array(2.0, s.fdt))])
        ms = s.node('ReduceMean', [x2, s.c64([-1])], keepdims=1)
        r = s.node('Sqrt', [s.node('Add', [ms, s.init(name + '.eps', np.array(s.c['eps'], s.fdt))])])
        y = s.node('Mul', [x, s.node('Reciprocal', [r])])
        return s.node('Mul', [s.init(name + '.w', (1 + 0.1 * s.rng.standard_normal(H)).astype(s.fdt)), y])

    def heads(s, t, n, D):  # [B, S, n*D] -> [B, n, S, D]
        return s.node('Transpose', [s.node('Reshape', [t, s.c64([0, 0, n, D])])], perm=[0, 2, 1, 3])

    def rot(s, t, cos, sin, D):
        h = D // 2
        x1 = s.node('Slice', [t, s.c64([0]), s.c64([h]), s.c64([-1])])
        x2 = s.node('Slice', [t, s.c64([h]), s.c64([2 ** 62]), s.c64([-1])])
        rh = s.node('Concat', [s.node('Neg', [x2]), x1], axis=-1)
        return s.node('Add', [s.node('Mul', [t, cos]), s.node('Mul', [rh, sin])])

    def build(s):
        c, r = s.c, s.rng
        nh, kvh, D = c['nh'], c['kvh'], c['D']
        H, V, I, L = nh * D, c['vocab'], c['inter'], c['layers']
        x = s.node('Gather', [s.init('embed', r.standard_normal((V, H)).astype(s.fdt)),
                              'input_ids'], axis=0)
        inv = 1.0 / (10000 ** (np.arange(0, D, 2) / D))
        ang = np.arange(c['max_len'])[:, None] * inv[None]
        ang = np.concatenate([ang, ang], 1)
        cos = s.node('Unsqueeze', [s.node('Gather', [s.init('cos_t', np.cos(ang).astype(s.fdt)),
                                                     'position_ids'], axis=0), s.c64([1])])
        sin = s.node('Unsqueeze', [s.node('Gather', [s.init('sin_t', np.sin(ang).astype(s.fdt)),
                                                     'position_ids'], axis=0), s.c64([1])])
        # mask [B, 1, S, T]: key j allowed when mask[b, j] and j <= past + s
        shp_ids = s.node('Shape', ['input_ids'])
        S_ = s.node('Gather', [shp_ids, s.c64(1)], axis=0)
        T_ = s.node('Gather', [s.node('Shape', ['attention_mask']), s.c64(1)], axis=0)
        P_ = s.node('Sub', [T_, S_])
        qpos = s.node('Unsqueeze', [s.node('Range', [P_, T_, s.c64(1)]), s.c64([1])])
        kpos = s.node('Unsqueeze', [s.node('Range', [s.c64(0), T_, s.c64(1)]), s.c64([0])])
        causal = s.node('LessOrEqual', [kpos, qpos])  # [S, T]
        pad = s.node('Cast', [s.node('Unsqueeze', ['attention_mask', s.c64([1, 2])])], to=TP.BOOL)
        ok = s.node('And', [pad, causal])  # [B, 1, S, T]
        neg = float(np.finfo(s.fdt).min)
        madd = s.node('Where', [ok, s.init('zero_f', np.array(0, s.fdt)),
                                s.init('min_f', np.array(neg, s.fdt))])
        inputs, outputs = [], []
        for l in range(L):
            h = s.rms(x, H, 'ln%d' % l)
            q = s.rot(s.heads(s.mnb(h, H, nh * D, 'l%d.q' % l, bias=c['qkv_bias']), nh, D), cos, sin, D)
            k = s.rot(s.heads(s.mnb(h, H, kvh * D, 'l%d.k' % l, bias=c['qkv_bias']), kvh, D), cos, sin, D)
            v = s.heads(s.mnb(h, H, kvh * D, 'l%d.v' % l, bias=c['qkv_bias']), kvh, D)
            pk = s.node('Concat', ['past_key_values.%d.key' % l, k], axis=2, outs=['present.%d.key' % l])
            pv = s.node('Concat', ['past_key_values.%d.value' % l, v], axis=2, outs=['present.%d.value' % l])
            if nh != kvh:  # repeat_kv: [B, kvh, T, D] -> [B, kvh, g, T, D] -> [B, nh, T, D]
                def rep(t):
                    sh = s.node('Shape', [t])
                    b_ = s.node('Slice', [sh, s.c64([0]), s.c64([1])])
                    t_ = s.node('Slice', [sh, s.c64([2]), s.c64([3])])
                    e = s.node('Concat', [b_, s.c64([kvh, nh // kvh]), t_, s.c64([D])], axis=0)
                    x5 = s.node('Expand', [s.node('Unsqueeze', [t, s.c64([2])]), e])
                    r4 = s.node('Concat', [b_, s.c64([nh]), t_, s.c64([D])], axis=0)
                    return s.node('Reshape', [x5, r4])
                kk, vv = rep(pk), rep(pv)
            else:
                kk, vv = pk, pv
            sc = s.node('MatMul', [q, s.node('Transpose', [kk], perm=[0, 1, 3, 2])])
            sc = s.node('Div', [sc, s.init('sq%d' % l, np.array(np.sqrt(D), s.fdt))])
            sc = s.node('Add', [sc, madd])
            pr = s.node('Softmax', [sc], axis=-1)
            a = s.node('MatMul', [pr, vv])
            a = s.node('Reshape', [s.node('Transpose', [a], perm=[0, 2, 1, 3]), s.c64([0, 0, H])])
            x = s.node('Add', [x, s.mnb(a, H, H, 'l%d.o' % l)])
            h = s.rms(x, H, 'pln%d' % l)
            g = s.mnb(h, H, I, 'l%d.gate' % l)
            act = s.node('Mul', [g, s.node('Sigmoid', [g])])
            x = s.node('Add', [x, s.mnb(s.node('Mul', [act, s.mnb(h, H, I, 'l%d.up' % l)]), I, H,
                                        'l%d.down' % l)])
            for n in ('key', 'value'):
                inputs.append(helper.make_tensor_value_info('past_key_values.%d.%s' % (l, n),
                              s.ftp, ['batch', kvh, 'past', D]))
                outputs.append(helper.make_tensor_value_info('present.%d.%s' % (l, n), s.ftp,
                               ['batch', kvh, 'total', D]))
        hf = s.rms(x, H, 'norm')
        s.mnb(hf, H, V, 'lm_head')
        s.nodes[-1].output[0] = 'logits'
        ins = [helper.make_tensor_value_info('input_ids', TP.INT64, ['batch', 'seq']),
               helper.make_tensor_value_info('attention_mask', TP.INT64, ['batch', 'total']),
               helper.make_tensor_value_info('position_ids', TP.INT64, ['batch', 'seq'])]
        outs = [helper.make_tensor_value_info('logits', s.ftp, ['batch', 'seq', V])] + outputs
        gr = helper.make_graph(s.nodes, 'u34o', ins + inputs, outs, s.inits)
        m = helper.make_model(gr, opset_imports=[helper.make_opsetid('', 18),
                                                 helper.make_opsetid('com.microsoft', 1)])
        m.ir_version = 8
        m.metadata_props.add(key='u34', value=json.dumps(c))
        return m


if __name__ == '__main__':
    c = dict(DEF)
    args = [a for a in sys.argv[1:] if a != '--optimum']
    c.update(json.loads(args[1]) if len(args) > 1 else {})
    onnx.save((O if '--optimum' in sys.argv else G)(c).build(), args[0])
