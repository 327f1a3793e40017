#!/usr/bin/python3
"""Exports real architectures with random weights (Debian's python3-torch/torchvision, no
downloads) in the layout of ../shared/models: NAME/model.onnx and NAME/in/<input>.npy.
Reference outputs come from ONNX Runtime (scripts/ort_refs.sh), not from torch.

usage: /usr/bin/python3 scripts/export_models.py OUTDIR [NAME ...]
"""
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
    'shufflenet_v2': (lambda: tv.shufflenet_v2_x1_0(), {'image': np.random.rand(2, 3, 224, 224)},
                      {'image': {0: 'batch'}}, 14),
    'vit_small': (small_vit, {'image': np.random.rand(2, 3, 64, 64)}, {'image': {0: 'batch'}},
                  14),
    'encoder': (encoder, {'x': np.random.rand(7, 2, 64)}, {'x': {0: 'seq', 1: 'batch'}}, 14),
    'decoder': (Decoder, {'idx': np.random.randint(0, 100, (2, 9)),
                          'memory': np.random.rand(2, 5, 64)},
                {'idx': {0: 'batch', 1: 'seq'}, 'memory': {0: 'batch', 1: 'mem'}}, 14),
}


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
    np.random.seed(0)
    out = sys.argv[1]
    for n in sys.argv[2:] or MODELS:
        export(out, n)
