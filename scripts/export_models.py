#!/usr/bin/python3
"""Exports real architectures with random weights (Debian's python3-torch/torchvision, no
downloads) in the layout of ../shared/models: NAME/model.onnx and NAME/in/<input>.npy.
Reference outputs come from ONNX Runtime (scripts/ort_refs.sh), not from torch.

usage: /usr/bin/python3 scripts/export_models.py OUTDIR [NAME ...]
       /usr/bin/python3 scripts/export_models.py --list      (the names, one a line)
"""
import math
import os
import sys

import numpy as np
import torch
import torchvision

torch.manual_seed(0)


class Decoder(torch.nn.Module):
    """A GPT-style block stack: causal self-attention through nn.TransformerDecoderLayer."""

    def __init__(self, vocab=100, d=64, heads=4, layers=2):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        layer = torch.nn.TransformerDecoderLayer(d, heads, 128, dropout=0.0, batch_first=True)
        self.dec = torch.nn.TransformerDecoder(layer, layers)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, idx, memory):
        x = self.emb(idx)
        n = idx.shape[1]
        mask = torch.triu(torch.full((n, n), float('-inf')), diagonal=1)
        return self.head(self.dec(x, memory, tgt_mask=mask))


class Seq2Seq(torch.nn.Module):
    """nn.Transformer with sinusoidal positional encodings built in forward from
    torch.arange(float): a float Range over the dynamic sequence lengths (issue 9 #5)."""

    def __init__(self, vocab=50, d=32, heads=4):
        super().__init__()
        self.d = d
        self.src_emb = torch.nn.Embedding(vocab, d)
        self.tgt_emb = torch.nn.Embedding(vocab, d)
        # sequence-first: batch_first layers take torch's fused fast path, which does not export
        self.tf = torch.nn.Transformer(d, heads, 2, 2, 64, dropout=0.0)
        self.head = torch.nn.Linear(d, vocab)

    def pos(self, x):
        n = x.shape[0]
        p = torch.arange(n, dtype=torch.float32).unsqueeze(1)
        f = torch.exp(torch.arange(0, self.d, 2, dtype=torch.float32) *
                      (-math.log(10000.0) / self.d))
        return torch.cat([torch.sin(p * f), torch.cos(p * f)], dim=-1).unsqueeze(1)

    def forward(self, src, tgt):
        s = self.src_emb(src) * math.sqrt(self.d)
        t = self.tgt_emb(tgt) * math.sqrt(self.d)
        n = tgt.shape[0]
        mask = torch.triu(torch.full((n, n), float('-inf')), diagonal=1)
        y = self.tf(s + self.pos(s), t + self.pos(t), tgt_mask=mask)
        return self.head(y)


def encoder():
    # sequence-first: batch_first layers take torch's fused fast path, which does not export
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0)
    return torch.nn.TransformerEncoder(layer, 2)


def small_vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=64, patch_size=16, num_layers=2, num_heads=2,
                             hidden_dim=64, mlp_dim=128, num_classes=10)


tv = torchvision.models
MODELS = {
    # name: (constructor, {input: example array}, dynamic axes, opset)
    'resnet18': (lambda: tv.resnet18(), {'image': np.random.rand(1, 3, 224, 224)},
                 {'image': {0: 'batch'}}, 13),
    'mobilenet_v2': (lambda: tv.mobilenet_v2(), {'image': np.random.rand(2, 3, 224, 224)},
                     {'image': {0: 'batch'}}, 13),
    'mobilenet_v3_small': (lambda: tv.mobilenet_v3_small(),
                           {'image': np.random.rand(1, 3, 224, 224)}, {'image': {0: 'batch'}}, 13),
    'shufflenet_v2': (lambda: tv.shufflenet_v2_x1_0(), {'image': np.random.rand(2, 3, 224, 224)},
                      {'image': {0: 'batch'}}, 14),
    'mobilenet_v3_small': (lambda: tv.mobilenet_v3_small(),
                           {'image': np.random.rand(1, 3, 224, 224)}, {'image': {0: 'batch'}}, 13),
    'mobilenet_v3_large': (lambda: tv.mobilenet_v3_large(),
                           {'image': np.random.rand(1, 3, 224, 224)}, {'image': {0: 'batch'}}, 13),
    'efficientnet_b0': (lambda: tv.efficientnet_b0(), {'image': np.random.rand(1, 3, 224, 224)},
                        {'image': {0: 'batch'}}, 13),
    'vit_small': (small_vit, {'image': np.random.rand(2, 3, 64, 64)}, {'image': {0: 'batch'}},
                  14),
    'encoder': (encoder, {'x': np.random.rand(7, 2, 64)}, {'x': {0: 'seq', 1: 'batch'}}, 14),
    'seq2seq_arange': (Seq2Seq, {'src': np.random.randint(0, 50, (11, 2)),
                                 'tgt': np.random.randint(0, 50, (7, 2))},
                       {'src': {0: 'src_len', 1: 'batch'}, 'tgt': {0: 'tgt_len', 1: 'batch'}},
                       14),
    'decoder': (Decoder, {'idx': np.random.randint(0, 100, (2, 9)),
                          'memory': np.random.rand(2, 5, 64)},
                {'idx': {0: 'batch', 1: 'seq'}, 'memory': {0: 'batch', 1: 'mem'}}, 14),
}


def qdq_convnet(d):
    """A statically quantized (QDQ) convnet as ONNX Runtime's quantizer writes them, built with
    onnx.helper: activations through QuantizeLinear/DequantizeLinear (uint8), int8 weights
    (per-channel for the Convs) through DequantizeLinear into Conv and MatMul, float biases, a
    dynamic batch and the Shape->Gather->Unsqueeze->Concat->Reshape flatten torch exports."""
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
    rng = np.random.default_rng(1)
    inits, nodes = [], []

    def init(name, a):
        inits.append(nh.from_array(a, name))
        return name

    def qdq(x, scale, zp=128):
        s = init(x + '_scale', np.array(scale, np.float32))
        z = init(x + '_zp', np.array(zp, np.uint8))
        nodes.append(h.make_node('QuantizeLinear', [x, s, z], [x + '_q']))
        nodes.append(h.make_node('DequantizeLinear', [x + '_q', s, z], [x + '_dq']))
        return x + '_dq'

    def weight(name, shape, per_channel):
        """int8 weight, symmetric: per output channel (axis 0) or per tensor"""
        w = rng.normal(0, (np.prod(shape[1:]) if per_channel else shape[0]) ** -0.5, shape)
        red = tuple(range(1, len(shape))) if per_channel else tuple(range(len(shape)))
        scale = (np.abs(w).max(axis=red, keepdims=True) / 127).astype(np.float32)
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        scale = scale.reshape(-1) if per_channel else scale.reshape(())
        args = [init(name + '_q', q), init(name + '_scale', scale),
                init(name + '_zp', np.zeros(scale.shape, np.int8))]
        nodes.append(h.make_node('DequantizeLinear', args, [name], axis=0) if per_channel
                     else h.make_node('DequantizeLinear', args, [name]))
        return name

    nodes.append(h.make_node('Identity', ['image'], ['x']))
    x = qdq('x', 1 / 255, 0)
    chans = [3, 16, 32]
    for i in range(2):
        w = weight(f'w{i}', (chans[i + 1], chans[i], 3, 3), True)
        b = init(f'b{i}', rng.normal(0, 0.1, chans[i + 1]).astype(np.float32))
        nodes.append(h.make_node('Conv', [x, w, b], [f'c{i}'], pads=[1, 1, 1, 1],
                                 strides=[2, 2]))
        nodes.append(h.make_node('Relu', [f'c{i}'], [f'r{i}']))
        x = qdq(f'r{i}', 0.05, 0)
    nodes.append(h.make_node('GlobalAveragePool', [x], ['gap']))
    # torch's flatten(1) with a dynamic batch
    nodes += [h.make_node('Shape', ['gap'], ['gs']),
              h.make_node('Gather', ['gs', init('i0', np.array(0, np.int64))], ['g0'], axis=0),
              h.make_node('Unsqueeze', ['g0', init('ax0', np.array([0], np.int64))], ['g0u']),
              h.make_node('Concat', ['g0u', init('m1', np.array([-1], np.int64))], ['fs'],
                          axis=0),
              h.make_node('Reshape', ['gap', 'fs'], ['flat'])]
    x = qdq('flat', 0.02, 128)
    w = weight('fc_w', (32, 10), False)
    nodes.append(h.make_node('MatMul', [x, w], ['mm']))
    nodes.append(h.make_node('Add', ['mm', init('fc_b', np.zeros(10, np.float32) + 0.1)],
                             ['out']))
    g = h.make_graph(nodes, 'qdq_convnet',
                     [h.make_tensor_value_info('image', T.FLOAT, ['batch', 3, 32, 32])],
                     [h.make_tensor_value_info('out', T.FLOAT, ['batch', 10])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 13)], producer_name='export_models')
    onnx.checker.check_model(m, full_check=True)
    os.makedirs(os.path.join(d, 'in'), exist_ok=True)
    onnx.save(m, os.path.join(d, 'model.onnx'))
    np.save(os.path.join(d, 'in', 'image.npy'), rng.random((2, 3, 32, 32), np.float32))


BUILT = {'qdq_convnet': qdq_convnet}


def realistic(model, feeds):
    """Random weights as torchvision initializes them give vanishing outputs (mobilenet_v2's
    logits ~1e-9, the ViT head is zero-initialized): give zero-initialized Linear layers random
    weights, BatchNorm random affine parameters, and running statistics measured on the example
    input (one train-mode pass with a cumulative average), so outputs are O(1) and comparisons
    against references mean something."""
    for m in model.modules():
        if isinstance(m, torch.nn.Linear) and not m.weight.detach().any():
            torch.nn.init.normal_(m.weight, std=m.in_features ** -0.5)
            if m.bias is not None:
                torch.nn.init.normal_(m.bias, std=0.1)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        torch.nn.init.uniform_(m.weight, 0.5, 1.5)
        torch.nn.init.normal_(m.bias, std=0.1)
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        model(*feeds)
    for m in bns:
        m.eval()


def export(outdir, name):
    if name in BUILT:
        BUILT[name](os.path.join(outdir, name))
        print('built', name)
        return
    make, inputs, dyn, opset = MODELS[name]
    model = make().eval()
    for m in model.modules():
        # attention in eval mode takes torch's fused fast path, which does not export; in
        # train mode with dropout 0 it is the plain composite
        if isinstance(m, torch.nn.MultiheadAttention):
            m.train()
    d = os.path.join(outdir, name)
    os.makedirs(os.path.join(d, 'in'), exist_ok=True)
    feeds = {}
    for k, v in inputs.items():
        v = v.astype(np.int64) if v.dtype.kind == 'i' else v.astype(np.float32)
        np.save(os.path.join(d, 'in', k + '.npy'), v)
        feeds[k] = torch.from_numpy(v)
    realistic(model, tuple(feeds.values()))
    with torch.no_grad():
        torch.onnx.export(model, tuple(feeds.values()), os.path.join(d, 'model.onnx'),
                          input_names=list(feeds), output_names=['out'], dynamic_axes=dyn,
                          opset_version=opset, training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=True)
    print('exported', name)


if __name__ == '__main__':
    if sys.argv[1:] == ['--list']:
        print('\n'.join(list(MODELS) + list(BUILT)))
        sys.exit(0)
    np.random.seed(0)
    out = sys.argv[1]
    for n in sys.argv[2:] or list(MODELS) + list(BUILT):
        export(out, n)
