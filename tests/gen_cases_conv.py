#!/usr/bin/python3
"""Differential cases for com.microsoft FusedConv against ONNX Runtime (../shared/oracle), written
to tests/cases/conv/<case>/ in the backend-test layout: every activation with its parameters, Z
(added before the activation) with and without B, a grouped and a depthwise conv, and 3x3
stride-1 convs with 8+ channels per group (Winograd in fast mode).
usage: /usr/bin/python3 tests/gen_cases_conv.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'conv')
rng = np.random.default_rng(5)


def case(name, x, w, bias=True, z=False, activation=None, params=None, **attrs):
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)
    X, W = f(*x), f(*w)
    if activation:
        attrs['activation'] = activation
    if params:
        attrs['activation_params'] = params
    ins = {'X': X, 'W': W, 'B': f(w[0]) if bias else None}
    if z:
        pads = attrs.get('pads', [0, 0, 0, 0])
        s = attrs.get('strides', [1, 1])
        g = attrs.get('group', 1)
        assert g >= 1
        oh = (x[2] + pads[0] + pads[2] - w[2]) // s[0] + 1
        ow = (x[3] + pads[1] + pads[3] - w[3]) // s[1] + 1
        ins['Z'] = f(x[0], w[0], oh, ow)
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    node_case(d, 'FusedConv', ins, attrs, opset=1, domain='com.microsoft', const_inputs=('W', 'B'))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    p1 = [1, 1, 1, 1]
    case('relu_z', (1, 8, 9, 9), (6, 8, 3, 3), z=True, activation='Relu', pads=p1)
    case('relu_z_nobias', (2, 8, 10, 7), (4, 8, 3, 3), bias=False, z=True, activation='Relu',
         pads=[0, 1, 1, 0])
    case('leakyrelu', (1, 16, 12, 12), (8, 16, 3, 3), activation='LeakyRelu', params=[0.2],
         pads=p1)
    case('clip_z', (1, 4, 8, 8), (6, 4, 3, 3), z=True, activation='Clip', params=[-0.5, 0.5],
         pads=p1, strides=[2, 2])
    case('hardsigmoid_depthwise', (1, 6, 9, 9), (6, 1, 3, 3), activation='HardSigmoid',
         params=[0.2, 0.5], group=6, pads=p1)
    case('sigmoid_grouped', (1, 16, 8, 8), (8, 8, 3, 3), activation='Sigmoid', group=2, pads=p1)
    case('tanh_1x1', (1, 8, 5, 5), (4, 8, 1, 1), z=True, activation='Tanh')
    case('none_z', (1, 8, 20, 20), (3, 8, 3, 3), z=True, pads=p1)


if __name__ == '__main__':
    main()
