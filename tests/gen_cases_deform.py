#!/usr/bin/python3
"""Differential cases for DeformConv against ONNX Runtime (../shared/oracle), written to
tests/cases/deform_conv/<case>/ in the backend-test layout: groups, offset groups, mask, bias,
pads, strides, dilations, batches, offsets reaching past the input's edges, kernel size 1,
a 1-wide input, float, double and float16 (ONNX Runtime 1.30 runs DeformConv in 2-D only).
usage: /usr/bin/python3 tests/gen_cases_deform.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case, OracleError  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'deform_conv')
rng = np.random.default_rng(19)


def case(name, n, c, hw, m, k, group=1, og=1, pads=(0, 0, 0, 0), strides=(1, 1),
         dil=(1, 1), mask=False, bias=False, spread=1.5, dtype=np.float32):
    f = lambda *s: rng.standard_normal(s).astype(dtype)
    oh = (hw[0] + pads[0] + pads[2] - ((k[0] - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (hw[1] + pads[1] + pads[3] - ((k[1] - 1) * dil[1] + 1)) // strides[1] + 1
    taps = k[0] * k[1]
    ins = {'X': f(n, c, *hw), 'W': f(m, c // group, *k),
           'offset': (f(n, og * taps * 2, oh, ow) * spread).astype(dtype),
           'B': f(m) if bias else None,
           'mask': rng.uniform(0, 1, (n, og * taps, oh, ow)).astype(dtype) if mask else None}
    if ins['mask'] is None:
        del ins['mask']
        if ins['B'] is None:
            del ins['B']
    attrs = {'kernel_shape': list(k), 'group': group, 'offset_group': og, 'pads': list(pads),
             'strides': list(strides), 'dilations': list(dil)}
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    try:
        node_case(d, 'DeformConv', ins, attrs, opset=19)
    except OracleError as e:
        print(name, 'refused by ONNX Runtime:', str(e).splitlines()[0][:200])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    case('plain_3x3', 1, 3, (7, 6), 4, (3, 3))
    case('pads_bias_mask', 2, 4, (6, 6), 3, (3, 3), pads=(1, 1, 1, 1), mask=True, bias=True)
    case('groups_offset_groups', 1, 8, (5, 7), 4, (2, 3), group=2, og=4, mask=True, bias=True,
         pads=(0, 1, 2, 1))
    case('stride_dilation', 1, 2, (9, 8), 2, (3, 2), strides=(2, 3), dil=(2, 1),
         pads=(1, 0, 1, 2))
    case('far_offsets', 1, 2, (5, 5), 2, (3, 3), pads=(1, 1, 1, 1), spread=6.0, bias=True)
    case('kernel_1x1', 2, 3, (4, 5), 5, (1, 1), og=3, mask=True)
    case('one_wide', 1, 2, (1, 6), 3, (1, 2), pads=(1, 0, 1, 0))
    case('double_grouped', 1, 4, (6, 5), 6, (2, 2), group=2, og=2, mask=True, bias=True,
         dtype=np.float64)
    case('half_pads_mask', 1, 2, (5, 5), 2, (3, 3), pads=(1, 1, 1, 1), mask=True, bias=True,
         spread=0.5, dtype=np.float16)


if __name__ == '__main__':
    main()
