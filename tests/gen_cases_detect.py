#!/usr/bin/python3
"""Differential NonMaxSuppression cases against ONNX Runtime (../shared/oracle), written to
tests/cases/detect/<case>/ in the backend-test layout: torchvision's batched_nms layout (each
class's boxes offset to a region of their own; past 64 candidates omopt checks only the kept
boxes whose x range meets the candidate's), several batches and classes with a score threshold
and a cap, centre boxes, tied scores (ONNX Runtime 1.30 takes the lower index first), flipped,
empty and NaN-edged boxes, IoU thresholds 0 and 1.
usage: /usr/bin/python3 tests/gen_cases_detect.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'detect')
rng = np.random.default_rng(13)


def corners(n, size=100.0, lo=2.0, hi=40.0):
    """n boxes [y1, x1, y2, x2] in a size x size image"""
    yx = rng.uniform(0, size, (n, 2))
    hw = rng.uniform(lo, hi, (n, 2))
    return np.concatenate([yx, yx + hw], axis=1).astype(np.float32)


def case(name, boxes, scores, max_out=None, iou=None, score=None, center=0):
    ins = {'boxes': boxes.astype(np.float32), 'scores': scores.astype(np.float32)}
    ins['max_output_boxes_per_class'] = None if max_out is None else np.array([max_out], np.int64)
    ins['iou_threshold'] = None if iou is None else np.array([iou], np.float32)
    ins['score_threshold'] = None if score is None else np.array([score], np.float32)
    while list(ins)[-1] and ins[list(ins)[-1]] is None:  # trailing omitted inputs
        ins.pop(list(ins)[-1])
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    node_case(d, 'NonMaxSuppression', ins, {'center_point_box': center}, opset=11,
              const_inputs=('max_output_boxes_per_class', 'iou_threshold', 'score_threshold'),
              out_types=[np.int64])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    # batched_nms: 12 classes x 60 boxes in one class, each class offset by (max + 1)
    k, per = 12, 60
    b = corners(k * per, 320, 4, 200)
    cls = np.repeat(np.arange(k), per)
    b += (cls * 521.0)[:, None].astype(np.float32)
    case('batched_offsets', b[None], rng.random((1, 1, k * per)), 1 << 40, 0.55)
    # several batches and classes, score threshold, cap
    case('batch_class_cap', np.stack([corners(300), corners(300)]), rng.random((2, 3, 300)), 40,
         0.4, 0.3)
    # centre boxes [xc, yc, w, h]
    c = np.concatenate([rng.uniform(0, 100, (250, 2)), rng.uniform(1, 30, (250, 2))], 1)
    case('center', c[None], rng.random((1, 2, 250)), 1000, 0.3, center=1)
    # tied scores: 5 levels over heavily overlapping boxes
    case('ties', corners(400, 50)[None], rng.integers(0, 5, (1, 1, 400)) / 4.0, 1000, 0.5)
    # flipped corners, empty boxes, NaN edges, infinite edges
    f = corners(200)
    f[::5] = f[::5][:, [2, 3, 0, 1]]
    f[1::7, 2] = f[1::7, 0]
    f[3::11, 1] = np.nan
    f[4::13, 3] = np.inf
    case('degenerate', f[None], rng.random((1, 1, 200)), 1000, 0.5)
    # any overlap suppresses; nothing does
    case('iou_zero', corners(150)[None], rng.random((1, 1, 150)), 1000, 0.0)
    case('iou_one', corners(150)[None], rng.random((1, 1, 150)), 1000, 1.0)
    # no thresholds given: max_output_boxes_per_class 0 (the default) selects nothing
    case('defaults', corners(100)[None], rng.random((1, 1, 100)))


if __name__ == '__main__':
    main()
