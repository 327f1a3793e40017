#!/usr/bin/python3
"""Cases for ONNX Runtime's QOperator ops (com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool, QLinearAveragePool, QGemm) against
ONNX Runtime 1.30 (../shared/oracle), written to tests/cases/contrib/ql_<case>/ in the
backend-test layout: int8 and uint8, zero points at the extremes (0, 255, -128, 127) and y's
absent (ONNX Runtime's type inference refuses other absent ones), scalar and [1] parameters, broadcasting shapes, odd sizes, every
attribute (axis, alpha, channels_last, pads, strides, count_include_pad, ceil_mode, auto_pad,
transA/transB, C's broadcasts, quantized and float outputs, per-column B parameters), parameters
constant and fed per run.
usage: /usr/bin/python3 tests/gen_cases_qlinear.py
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..', 'shared')), 'oracle'))
from mkcase import node_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'contrib')
rng = np.random.default_rng(34)
U8, S8, F32 = np.uint8, np.int8, np.float32


def q8(dt, *shape):
    lo, hi = (-128, 128) if dt == S8 else (0, 256)
    return rng.integers(lo, hi, size=shape).astype(dt)


def scale(lo=0.002, hi=0.2, one=False):
    v = np.float32(rng.uniform(lo, hi))
    return np.array([v], F32) if one else np.array(v, F32)


def zp(dt, v=None, one=False):
    v = rng.integers(-128, 128) if v is None and dt == S8 else \
        rng.integers(0, 256) if v is None else v
    return np.array([v], dt) if one else np.array(v, dt)


def write(name, op, ins, attrs=None, consts=(), out_types=None, keep_empty=False):
    while list(ins.values())[-1] is None and not keep_empty:  # trailing omitted inputs left off the node
        ins.popitem()
    d = os.path.join(OUT, 'ql_' + name)
    shutil.rmtree(d, ignore_errors=True)
    node_case(d, op, ins, attrs or {}, opset=1, domain='com.microsoft', const_inputs=consts,
              out_types=out_types)


PARAMS = ('A_scale', 'A_zero_point', 'B_scale', 'B_zero_point', 'C_scale', 'C_zero_point')


def binary(name, op, dt, sa, sb, zps=(None, None, None), nozp=False, one=False, const=True):
    ins = {'A': q8(dt, *sa), 'A_scale': scale(one=one),
           'A_zero_point': zp(dt, zps[0], one),
           'B': q8(dt, *sb), 'B_scale': scale(one=one),
           'B_zero_point': zp(dt, zps[1], one),
           'C_scale': scale(0.004, 0.4 if op == 'QLinearMul' else 0.2, one=one),
           'C_zero_point': None if nozp else zp(dt, zps[2], one)}
    write(name, op, ins, consts=PARAMS if const else ())


for op, tag in (('QLinearAdd', 'add'), ('QLinearMul', 'mul')):
    binary(tag + '_u8_same', op, U8, (3, 37), (3, 37), (0, 255, 128))
    binary(tag + '_s8_same', op, S8, (5, 67), (5, 67), (-128, 127, 0))
    binary(tag + '_u8_row', op, U8, (4, 33), (33,), (255, 0, 255))
    binary(tag + '_s8_col', op, S8, (2, 6, 9), (6, 1), (127, -128, -128), const=False)
    binary(tag + '_u8_scalar_b', op, U8, (7, 11), ())
    binary(tag + '_s8_scalar_a', op, S8, (1,), (3, 41))
    binary(tag + '_u8_outer', op, U8, (3, 1, 5), (1, 4, 1), const=False)
    binary(tag + '_u8_nozp', op, U8, (2, 3, 19), (2, 3, 19), nozp=True)
    binary(tag + '_u8_long', op, U8, (4099,), (4099,), (3, 250, 17))


def act(name, op, dt, shape, attrs=None, zps=(None, None), nozp=False, const=True, one=False,
        xs=(0.01, 0.1), ys=None):
    x = q8(dt, *shape)
    x.reshape(-1)[:256] = np.arange(256).astype(np.uint8).view(dt)[:min(256, x.size)]
    if ys is None:
        ys = (1 / 256.0, 1 / 256.0) if op == 'QLinearSigmoid' else (0.005, 0.08)
    ins = {'X': x, 'X_scale': scale(*xs, one=one),
           'X_zero_point': zp(dt, zps[0], one),
           'Y_scale': scale(*ys, one=one),
           'Y_zero_point': None if nozp else zp(dt, zps[1], one)}
    # ONNX Runtime reads input 4's slot even when absent: the node lists it as ""
    write(name, op, ins, attrs, consts=('X_scale', 'X_zero_point', 'Y_scale', 'Y_zero_point')
          if const else (), keep_empty=True)


act('sigmoid_u8', 'QLinearSigmoid', U8, (4, 64), zps=(128, 0))
act('sigmoid_s8', 'QLinearSigmoid', S8, (2, 131), zps=(0, -128), xs=(0.03, 0.08))
act('sigmoid_s8_wide', 'QLinearSigmoid', S8, (256,), zps=(-128, 127), xs=(0.1, 0.2),
    ys=(0.003, 0.01))
act('sigmoid_u8_fed', 'QLinearSigmoid', U8, (3, 5, 17), const=False, one=True)
act('sigmoid_u8_nozp', 'QLinearSigmoid', U8, (300,), nozp=True)
act('leaky_u8', 'QLinearLeakyRelu', U8, (4, 64), {'alpha': 0.1}, zps=(128, 100))
act('leaky_s8', 'QLinearLeakyRelu', S8, (2, 3, 43), {'alpha': 0.3}, zps=(-128, 127))
act('leaky_s8_default', 'QLinearLeakyRelu', S8, (259,), zps=(5, -7))
act('leaky_u8_fed', 'QLinearLeakyRelu', U8, (257,), {'alpha': 1.7}, zps=(255, 0), const=False)
act('leaky_u8_nozp', 'QLinearLeakyRelu', U8, (256,), {'alpha': 0.05}, nozp=True)


def concat(name, dt, shapes, axis, same=(), const=True):
    ys, yz = scale(), zp(dt)
    ins = {'Y_scale': ys, 'Y_zero_point': yz}
    consts = ['Y_scale', 'Y_zero_point']
    for i, s in enumerate(shapes):
        ins['x%d' % i] = q8(dt, *s)
        ins['x%d_scale' % i] = ys.copy() if i in same else scale()
        ins['x%d_zero_point' % i] = yz.copy() if i in same else zp(dt, [0, 255][i % 2] if dt == U8
                                                                   else [-128, 127][i % 2])
        consts += ['x%d_scale' % i, 'x%d_zero_point' % i]
    write(name, 'QLinearConcat', ins, {'axis': axis}, consts=consts if const else (),
          out_types=[dt])


concat('concat_u8_axis1', U8, [(2, 3, 5), (2, 7, 5), (2, 1, 5)], 1)
concat('concat_s8_axis0', S8, [(3, 4), (1, 4)], 0, same=(1,))
concat('concat_u8_last', U8, [(2, 3, 5), (2, 3, 2), (2, 3, 9)], -1, same=(0,), const=False)
concat('concat_s8_copy', S8, [(4, 6), (4, 3)], 1, same=(0, 1))
concat('concat_u8_empty', U8, [(2, 0, 3), (2, 4, 3)], 1)


def pool(name, op, dt, shape, attrs=None, zps=(None, None), nozp=False, const=True,
         xs=(0.01, 0.1), ys=(0.01, 0.1)):
    ins = {'X': q8(dt, *shape), 'x_scale': scale(*xs),
           'x_zero_point': zp(dt, zps[0]),
           'y_scale': scale(*ys), 'y_zero_point': None if nozp else zp(dt, zps[1])}
    write(name, op, ins, attrs,
          consts=('x_scale', 'x_zero_point', 'y_scale', 'y_zero_point') if const else (),
          out_types=[dt])


G, A = 'QLinearGlobalAveragePool', 'QLinearAveragePool'
pool('gap_u8', G, U8, (2, 5, 7, 9), zps=(0, 255))
pool('gap_s8_last', G, S8, (2, 6, 5, 3), {'channels_last': 1}, zps=(-128, 127))
pool('gap_u8_1d', G, U8, (3, 4, 33), const=False)
pool('gap_s8_3d', G, S8, (1, 3, 4, 5, 6))
pool('gap_u8_c1_last', G, U8, (2, 7, 7, 1), {'channels_last': 1}, zps=(255, 0))
pool('gap_u8_big', G, U8, (1, 2, 64, 65), xs=(0.05, 0.1), ys=(0.02, 0.03))
pool('avg_u8_basic', A, U8, (2, 3, 9, 11), {'kernel_shape': [3, 3]}, zps=(0, 255))
pool('avg_s8_pads', A, S8, (1, 4, 8, 7), {'kernel_shape': [3, 2], 'pads': [1, 0, 2, 1],
                                          'strides': [2, 1]}, zps=(-128, 127))
pool('avg_u8_incl_pad', A, U8, (1, 2, 7, 7), {'kernel_shape': [3, 3], 'pads': [1, 1, 1, 1],
                                             'count_include_pad': 1})
pool('avg_s8_ceil', A, S8, (2, 3, 10, 9), {'kernel_shape': [3, 3], 'strides': [2, 2],
                                          'ceil_mode': 1})
pool('avg_u8_ceil_incl', A, U8, (1, 2, 10, 9), {'kernel_shape': [3, 3], 'strides': [2, 2],
                                               'pads': [1, 1, 1, 1], 'ceil_mode': 1,
                                               'count_include_pad': 1})
pool('avg_u8_same_upper', A, U8, (1, 3, 8, 9), {'kernel_shape': [3, 4], 'strides': [2, 2],
                                               'auto_pad': 'SAME_UPPER'})
pool('avg_s8_same_lower', A, S8, (1, 3, 8, 9), {'kernel_shape': [4, 3], 'strides': [3, 2],
                                               'auto_pad': 'SAME_LOWER'})
pool('avg_u8_valid', A, U8, (2, 2, 9, 8), {'kernel_shape': [2, 3], 'strides': [2, 2],
                                          'auto_pad': 'VALID'})
pool('avg_s8_last', A, S8, (2, 7, 6, 5), {'kernel_shape': [2, 3], 'pads': [1, 1, 0, 1],
                                         'strides': [1, 2], 'channels_last': 1})
pool('avg_u8_last_incl', A, U8, (1, 9, 9, 3), {'kernel_shape': [3, 3], 'pads': [1, 1, 1, 1],
                                              'strides': [2, 2], 'channels_last': 1,
                                              'count_include_pad': 1}, zps=(255, 0))
pool('avg_u8_1d', A, U8, (2, 3, 17), {'kernel_shape': [4], 'strides': [3], 'pads': [2, 1]})
pool('avg_s8_3d', A, S8, (1, 2, 5, 6, 7), {'kernel_shape': [2, 3, 2], 'strides': [2, 1, 2],
                                          'pads': [0, 1, 1, 1, 0, 0]})
pool('avg_u8_global_fallback', A, U8, (2, 3, 5, 6), {'kernel_shape': [5, 6]}, zps=(7, 250))
pool('avg_u8_nozp', A, U8, (1, 2, 6, 6), {'kernel_shape': [2, 2], 'strides': [2, 2]},
     nozp=True)
pool('avg_u8_fed', A, U8, (1, 3, 7, 8), {'kernel_shape': [3, 3], 'pads': [1, 1, 1, 1]},
     const=False)


def qgemm(name, adt, bdt, M, K, N, ta=0, tb=0, alpha=None, c=None, yq=True, per_col=False,
          zps=(None, None, None), const=True, ys_only=False):
    nc = (N,) if per_col else ()
    a = q8(adt, *((K, M) if ta else (M, K)))
    b = q8(bdt, *((N, K) if tb else (K, N)))
    ins = {'A': a, 'a_scale': scale(0.01, 0.05), 'a_zero_point': zp(adt, zps[0]),
           'B': b, 'b_scale': (rng.uniform(0.001, 0.01, size=nc)).astype(F32),
           'b_zero_point': q8(bdt, *nc) if zps[1] is None else np.full(nc, zps[1], bdt),
           'C': None, 'y_scale': None, 'y_zero_point': None}
    if c is not None:
        ins['C'] = rng.integers(-20000, 20000, size=c).astype(np.int32)
    if yq or ys_only:
        ins['y_scale'] = scale(0.5, 3.0)
    if yq:
        ins['y_zero_point'] = zp(adt, zps[2])
    attrs = {}
    if ta:
        attrs['transA'] = 1
    if tb:
        attrs['transB'] = 1
    if alpha is not None:
        attrs['alpha'] = alpha
    consts = ('B', 'b_scale', 'b_zero_point', 'C', 'y_scale', 'y_zero_point') if const else ()
    write(name, 'QGemm', ins, attrs, consts=consts,
          out_types=[adt] if yq else [F32])


qgemm('qgemm_u8s8', U8, S8, 5, 37, 19, zps=(0, 0, 128))
qgemm('qgemm_u8u8_bias_n', U8, U8, 7, 64, 33, c=(33,), zps=(255, 255, 0))
qgemm('qgemm_s8s8_trans', S8, S8, 6, 29, 11, ta=1, tb=1, zps=(-128, 0, 127))
qgemm('qgemm_u8s8_col', U8, S8, 9, 40, 17, per_col=True, c=(9, 17), alpha=0.5)
qgemm('qgemm_u8s8_float', U8, S8, 4, 50, 23, yq=False, c=(1, 23), per_col=True)
qgemm('qgemm_s8s8_float_tb', S8, S8, 3, 17, 8, tb=1, yq=False, alpha=2.0)
qgemm('qgemm_u8u8_bias_m1', U8, U8, 8, 21, 5, ta=1, c=(8, 1), zps=(3, 250, 255), const=False)
qgemm('qgemm_s8s8_bias_scalar', S8, S8, 2, 99, 31, c=(), zps=(127, -128, -128))
qgemm('qgemm_u8s8_ys_only', U8, S8, 3, 12, 7, yq=False, ys_only=True)
qgemm('qgemm_u8s8_large', U8, S8, 33, 300, 70, per_col=True, c=(70,))
