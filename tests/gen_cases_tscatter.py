#!/usr/bin/python3
"""Cases for ONNX TensorScatter (opset 24, the KV-cache update) against ONNX Runtime 1.30
(../shared/oracle), written to tests/cases/index/tscatter_<case>/ in the backend-test layout:
linear mode with write_indices per batch and without them, a whole-cache update, circular mode
wrapping around the end and with indices past max_sequence_length, axis 1, 2, -1 and -3 on 4-D
caches and axis 1 on 3-D ones, float16, int8 and int64 elements, a batch of 3 with another
index each, an empty update.
usage: /usr/bin/python3 tests/gen_cases_tscatter.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'index')
rng = np.random.default_rng(24)


def case(name, cache, seq, axis=-2, wi=None, dt=np.float32, **attrs):
    """cache: past_cache's shape; seq: update's extent along axis; wi: write_indices or None."""
    ushape = list(cache)
    ushape[axis] = seq
    if np.issubdtype(dt, np.integer):
        past = rng.integers(-100, 100, cache).astype(dt)
        upd = rng.integers(-100, 100, ushape).astype(dt)
    else:
        past = rng.standard_normal(cache).astype(dt)
        upd = rng.standard_normal(ushape).astype(dt)
    ins = {'past_cache': past, 'update': upd}
    if wi is not None:
        ins['write_indices'] = np.array(wi, np.int64)
    if axis != -2:
        attrs['axis'] = axis
    d = os.path.join(OUT, 'tscatter_' + name)
    shutil.rmtree(d, ignore_errors=True)
    node_case(d, 'TensorScatter', ins, attrs, opset=24, out_types=[dt])


case('linear_b2', (2, 3, 8, 4), 2, wi=[1, 6])
case('linear_no_indices', (2, 2, 6, 3), 3)
case('linear_decode_b3', (3, 2, 16, 8), 1, wi=[0, 15, 7], mode='linear')
case('linear_whole', (1, 2, 5, 4), 5, wi=[0])
case('circular_wrap', (2, 2, 6, 4), 3, wi=[4, 5], mode='circular')
case('circular_past_end', (2, 1, 5, 3), 2, wi=[7, 13], mode='circular')
case('circular_whole', (1, 2, 4, 2), 4, wi=[3], mode='circular')
case('axis1', (2, 7, 3, 4), 2, axis=1, wi=[5, 0])
case('axis_last', (2, 3, 4, 9), 3, axis=-1, wi=[6, 2])
case('axis_m3_circular', (2, 6, 2, 3), 4, axis=-3, wi=[3, 5], mode='circular')
case('rank3_axis1', (3, 10, 5), 4, axis=1, wi=[2, 6, 0])
case('f16_circular', (2, 2, 8, 16), 3, wi=[7, 2], dt=np.float16, mode='circular')
case('int8_linear', (2, 2, 9, 5), 4, wi=[5, 1], dt=np.int8)
case('int64_axis2', (1, 3, 6, 2), 2, axis=2, wi=[4], dt=np.int64)
case('empty_update', (2, 2, 4, 3), 0, wi=[4, 1])
