#!/usr/bin/python3
"""Cases for com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul against ONNX Runtime
(../shared/oracle), written to tests/cases/dynq/<case>/ in the backend-test layout: per-tensor and
per-column scales and zero points, with and without zero points and bias, int8 and uint8 B (and
A), A of rank 2 and 3, K and N off multiples of 16 and 64, B constant and not.
usage: /usr/bin/python3 tests/gen_cases_dynq.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'dynq')
rng = np.random.default_rng(33)


def q8(dt, *shape):
    lo, hi = (-128, 128) if dt == np.int8 else (0, 256)
    return rng.integers(lo, hi, size=shape).astype(dt)


def case(name, op, a_shape, K, N, bdt=np.int8, adt=np.uint8, per_col=False, azp=False,
         bzp=False, bias=False, const_b=True):
    nc = (N,) if per_col else ()
    bs = (rng.integers(1, 1000, size=nc) / 65536.0).astype(np.float32)
    ins = {}
    if op == 'DynamicQuantizeMatMul':
        ins['A'] = (rng.standard_normal(a_shape + (K,)) * 2).astype(np.float32)
        ins['B'] = q8(bdt, K, N)
        ins['b_scale'] = bs
        ins['b_zero_point'] = q8(bdt, *nc) if bzp else None
    else:
        ins['A'] = q8(adt, *(a_shape + (K,)))
        ins['B'] = q8(bdt, K, N)
        ins['a_scale'] = np.array(rng.integers(1, 1000) / 4096.0, dtype=np.float32)
        ins['b_scale'] = bs
        ins['a_zero_point'] = q8(adt) if azp else None
        ins['b_zero_point'] = q8(bdt, *nc) if bzp else None
    ins['bias'] = rng.standard_normal(N).astype(np.float32) if bias else None
    while list(ins.values())[-1] is None:  # trailing omitted inputs left off the node
        ins.popitem()
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    consts = ('B', 'b_scale', 'b_zero_point', 'bias') if const_b else ()
    node_case(d, op, ins, {}, opset=1, domain='com.microsoft', const_inputs=consts,
              out_types=[np.float32])


D, F = 'DynamicQuantizeMatMul', 'MatMulIntegerToFloat'
case('dyn_tensor_bias', D, (2, 7), 65, 33, bias=True)
case('dyn_col_zp_u8', D, (5,), 100, 17, bdt=np.uint8, per_col=True, bzp=True, bias=True)
case('dyn_col_nobias', D, (3, 4), 31, 70, per_col=True)
case('dyn_tensor_zp', D, (9,), 16, 64, bzp=True, const_b=False)
case('dyn_packed', D, (1, 40), 256, 130, bias=True)
case('f_tensor', F, (6,), 37, 19)
case('f_col_zps_bias', F, (2, 5), 48, 66, per_col=True, azp=True, bzp=True, bias=True)
case('f_s8a_s8b', F, (4,), 23, 9, adt=np.int8, azp=True, bzp=True)
case('f_u8b', F, (4,), 23, 9, bdt=np.uint8, azp=True, bzp=True)
case('f_rank3_bias', F, (2, 3), 129, 31, per_col=True, bias=True, const_b=False)
case('f_packed', F, (33,), 200, 96, bias=True)
