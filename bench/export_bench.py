#!/usr/bin/python3
"""Exports the benchmark models of issue 13 (torchvision architectures with random weights at
realistic scales: BatchNorm statistics measured on the example input, see
scripts/export_models.py's realistic()) into a cache folder, in the layout of ../shared/models:
NAME/model.onnx and NAME/in/<input>.npy. Models are never committed: they are made again from
this script (Debian's python3-torch/torchvision, no downloads).

usage: /usr/bin/python3 bench/export_bench.py [--out DIR] [NAME ...]
       /usr/bin/python3 bench/export_bench.py --list
DIR defaults to $OMOPT_BENCH_MODELS or ~/.cache/omopt-bench/models; existing folders are kept.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'scripts'))
from export_models import realistic  # noqa: E402

tv = torchvision.models
det = torchvision.models.detection
seg = torchvision.models.segmentation


class Gpt(torch.nn.Module):
    """A GPT-2-small-sized decoder (12 layers, d 768, 12 heads, ~110M parameters with its
    embeddings): causal self-attention blocks through nn.TransformerEncoderLayer (pre-norm, GELU)
    and a tied-size vocabulary head."""

    def __init__(self, vocab=8192, d=768, heads=12, layers=12, ctx=128):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Parameter(torch.randn(ctx, d) * 0.02)
        layer = torch.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation='gelu',
                                                 batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        n = idx.shape[1]
        x = self.emb(idx) + self.pos[:n]
        mask = torch.triu(torch.full((n, n), float('-inf')), diagonal=1)
        return self.head(self.norm(self.blocks(x, mask=mask)))


def image(n, hw):
    return {'image': np.random.rand(n, 3, hw, hw).astype(np.float32)}


MODELS = {
    # name: (constructor, inputs, opset[, batch]): batch True exports axis 0 of the inputs and
    # outputs as the symbol N (dynamic_axes), as users export for batching
    'resnet50': (lambda: tv.resnet50(), image(1, 224), 13),
    'efficientnet_b0': (lambda: tv.efficientnet_b0(), image(1, 224), 13),
    'mobilenet_v3': (lambda: tv.mobilenet_v3_large(), image(1, 224), 13),
    'deeplabv3_mobilenet_v3_large': (
        lambda: seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                 aux_loss=False), image(1, 224), 13),
    'ssdlite320_mobilenet_v3_large': (
        lambda: det.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None),
        image(1, 320), 13),
    'efficientnet_b0_batch': (lambda: tv.efficientnet_b0(), image(2, 224), 13, True),
    'vit_b_16': (lambda: tv.vit_b_16(), image(1, 224), 14),
    'gpt_110m': (Gpt, {'idx': np.random.randint(0, 8192, (1, 32)).astype(np.int64)}, 14),
}


class Unwrap(torch.nn.Module):
    """Detection and segmentation models take a list of images and return dicts: a plain
    tensor-in, tensors-out wrapper for the exporter."""

    def __init__(self, m, kind):
        super().__init__()
        self.m, self.kind = m, kind

    def forward(self, x):
        if self.kind == 'det':
            r = self.m(list(x))[0]
            return r['boxes'], r['scores'], r['labels']
        return self.m(x)['out']


def export(outdir, name):
    d = os.path.join(outdir, name)
    if os.path.exists(os.path.join(d, 'model.onnx')):
        print('kept', d)
        return
    torch.manual_seed(0)
    np.random.seed(0)
    make, inputs, opset, *batch = MODELS[name]
    model = make().eval()
    for m in model.modules():
        # attention in eval mode takes torch's fused fast path, which does not export; in
        # train mode with dropout 0 it is the plain composite
        if isinstance(m, torch.nn.MultiheadAttention):
            m.train()
    feeds = {k: torch.from_numpy(v) for k, v in inputs.items()}
    kind = 'det' if name.startswith('ssd') else 'seg' if name.startswith('deeplab') else None
    wrapped = Unwrap(model, kind) if kind else model
    # BatchNorm statistics from a batch of two (one image's pooled 1x1 maps are a single value
    # per channel, which train mode refuses): the example and a second random image
    calib = tuple(torch.cat([v, torch.rand_like(v)]) if v.is_floating_point() else v
                  for v in feeds.values())
    realistic(wrapped, calib)
    outs = ['boxes', 'scores', 'labels'] if kind == 'det' else ['out']
    axes = {k: {0: 'N'} for k in list(feeds) + outs} if batch and batch[0] else None
    os.makedirs(os.path.join(d, 'in'), exist_ok=True)
    for k, v in inputs.items():
        np.save(os.path.join(d, 'in', k + '.npy'), v)
    tmp = os.path.join(d, 'model.onnx.tmp')
    with torch.no_grad():
        torch.onnx.export(wrapped, tuple(feeds.values()), tmp, input_names=list(feeds),
                          output_names=outs, opset_version=opset, dynamic_axes=axes,
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    os.replace(tmp, os.path.join(d, 'model.onnx'))
    print('exported', d)


def default_dir():
    return os.environ.get('OMOPT_BENCH_MODELS') or os.path.join(
        os.path.expanduser('~'), '.cache', 'omopt-bench', 'models')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=default_dir())
    ap.add_argument('--list', action='store_true')
    ap.add_argument('names', nargs='*')
    a = ap.parse_args()
    if a.list:
        print('\n'.join(MODELS))
        return
    for n in a.names or list(MODELS):
        if n not in MODELS:
            raise SystemExit('unknown model %s (--list)' % n)
        export(a.out, n)


if __name__ == '__main__':
    main()
