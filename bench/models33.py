#!/usr/bin/python3
"""bench/models33.py OUT — the model set of issue 33's tables (bench/README.md, "Idle machine"):
torchvision CNNs and a small ViT/encoder from scripts/export_models.py, their int8 QDQ forms
(bench/quantize.py static, 8 uniform random 1x3x224x224 calibration samples), float16 forms
(all float initializers and the graph's inputs/outputs float16, as onnxconverter-common's
converter with keep_io_types=False), a dynamic-quantized MLP (784-1024-1024-10, batch 64) and
4-layer encoder (d 256, 4 heads, ff 1024, sequence 128; bench/quantize.py dynamic), and a
static QDQ encoder. Random weights with realistic scales (export_models.py's); nothing is
downloaded. Each model is OUT/NAME/model.onnx with OUT/NAME/in/<input>.npy, as compare_ort.py
reads them."""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
CNNS = ['resnet18', 'mobilenet_v2', 'mobilenet_v3_small', 'shufflenet_v2', 'efficientnet_b0']


def copy_inputs(out, src, dst):
    os.makedirs(os.path.join(out, dst, 'in'), exist_ok=True)
    for f in os.listdir(os.path.join(out, src, 'in')):
        shutil.copy(os.path.join(out, src, 'in', f), os.path.join(out, dst, 'in', f))


def quantize(out, src, kind, calib=None):
    dst = src + ('_qdq' if kind == 'static' else '_dynq')
    copy_inputs(out, src, dst)
    cmd = [PY, os.path.join(HERE, 'quantize.py'), kind, os.path.join(out, src, 'model.onnx'),
           os.path.join(out, dst, 'model.onnx')]
    subprocess.check_call(cmd + (['--calib', calib] if calib else []))


def half(out, src):
    m = onnx.load(os.path.join(out, src, 'model.onnx'))
    g = m.graph
    del g.value_info[:]
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16),
                                               t.name))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(
                    numpy_helper.to_array(a.t).astype(np.float16)))
            if n.op_type == 'Cast' and a.name == 'to' and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for v in list(g.input) + list(g.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    dst = src + '_fp16'
    os.makedirs(os.path.join(out, dst, 'in'), exist_ok=True)
    onnx.save(m, os.path.join(out, dst, 'model.onnx'))
    for f in os.listdir(os.path.join(out, src, 'in')):
        x = np.load(os.path.join(out, src, 'in', f))
        np.save(os.path.join(out, dst, 'in', f), x.astype(np.float16))


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0)
        self.e = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)

    def forward(self, x):
        return self.e(x)


def export(out, name, module, x, axes):
    os.makedirs(os.path.join(out, name, 'in'), exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(module.eval(), (x,), os.path.join(out, name, 'model.onnx'),
                          input_names=['x'], output_names=['y'], dynamic_axes={'x': axes},
                          opset_version=17)
    np.save(os.path.join(out, name, 'in', 'x.npy'), x.numpy())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    subprocess.check_call([PY, os.path.join(HERE, '..', 'scripts', 'export_models.py'), out] +
                          CNNS + ['vit_small'])
    rng = np.random.default_rng(0)
    calib = os.path.join(out, 'calib')
    os.makedirs(calib, exist_ok=True)
    for i in range(8):
        np.save(os.path.join(calib, 's%d.npy' % i),
                rng.uniform(0, 1, (1, 3, 224, 224)).astype(np.float32))
    for n in ['resnet18', 'mobilenet_v3_small', 'mobilenet_v2']:
        quantize(out, n, 'static', calib)
    for n in ['resnet18', 'mobilenet_v2']:
        half(out, n)
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                              torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                              torch.nn.Linear(1024, 10))
    export(out, 'mlp', mlp, torch.rand(64, 784), {0: 'N'})
    export(out, 'bert4', Encoder(), torch.randn(128, 1, 256), {0: 'S', 1: 'B'})
    for n in ['mlp', 'bert4']:
        quantize(out, n, 'dynamic')
    calib_b = os.path.join(out, 'calib_bert4')
    os.makedirs(calib_b, exist_ok=True)
    for i in range(4):
        np.save(os.path.join(calib_b, 's%d.npy' % i),
                rng.standard_normal((128, 1, 256)).astype(np.float32))
    quantize(out, 'bert4', 'static', calib_b)
    shutil.rmtree(calib)
    shutil.rmtree(calib_b)


if __name__ == '__main__':
    main()
