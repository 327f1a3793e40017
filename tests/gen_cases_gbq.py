#!/usr/bin/python3
"""Cases for com.microsoft GatherBlockQuantized against ONNX Runtime (../shared/oracle), written
to tests/cases/contrib/gbq_<case>/ in the backend-test layout: uint8 data with bits 2, 4 and 8
(packed along the last axis, packed zero points, odd block counts, the default zero point),
int4 and uint4 data (odd element counts, gather and quantize axes anywhere, negative axes,
gather_axis equal to quantize_axis), float and float16 scales, int32 and int64 indices of rank
0-2 with negative values. data, scales and zero points are initializers (as in exports);
indices are the graph input. ONNX Runtime 1.30 refuses an index outside [-s, s) (an error, not
zeros): test_gather_bq covers that. The onnx package here (1.12) has no int4 type, so the
4-bit tensors are written as raw TensorProtos.
usage: /usr/bin/python3 tests/gen_cases_gbq.py
"""
import os
import shutil
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.environ.get('OMOPT_SHARED', os.path.join(HERE, '..', '..',
                                                                            'shared')), 'oracle'))
from mkcase import graph_case  # noqa: E402

OUT = os.path.join(HERE, 'cases', 'contrib')
rng = np.random.default_rng(34)
UINT4, INT4 = 21, 22


def raw_tensor(name, dtype, shape, codes):
    """codes: uint8 array; 4-bit types are packed two per byte, element 0 low (ONNX)."""
    t = TensorProto()
    t.name, t.data_type = name, dtype
    t.dims.extend(shape)
    c = np.asarray(codes, dtype=np.uint8).reshape(-1)
    if dtype in (UINT4, INT4):
        c = np.concatenate([c & 15, np.zeros(len(c) % 2, np.uint8)])
        c = (c[0::2] | (c[1::2] << 4)).astype(np.uint8)
    t.raw_data = c.tobytes()
    return t


def pack_rows(codes, bits):
    """uint8 packing along the last axis, element 0 in the low bits."""
    per = 8 // bits
    n = codes.shape[-1]
    pad = (-n) % per
    c = np.concatenate([codes, np.zeros(codes.shape[:-1] + (pad,), np.uint8)], axis=-1)
    c = c.reshape(codes.shape[:-1] + (-1, per)).astype(np.uint16)
    out = np.zeros(c.shape[:-1], np.uint16)
    for i in range(per):
        out |= c[..., i] << (i * bits)
    return out.astype(np.uint8)


def case(name, dtype, shape, idx, ga=None, qa=None, block=16, bits=4, zp=True, sdt=np.float32):
    """shape: the codes' shape (uint8: its last axis unpacked)."""
    r = len(shape)
    qan = (qa if qa is not None else 1) % r
    nblk = -(-shape[qan] // block)
    sshape = list(shape)
    sshape[qan] = nblk
    top = (1 << bits) if dtype == TensorProto.UINT8 else 16
    codes = rng.integers(0, top, size=shape).astype(np.uint8)
    zcodes = rng.integers(0, top, size=sshape).astype(np.uint8)
    scales = (rng.random(sshape) * 0.1 + 0.01).astype(sdt)
    inits = [numpy_helper.from_array(scales, 'scales')]
    if dtype == TensorProto.UINT8:
        packed = pack_rows(codes, bits) if bits < 8 else codes
        inits.append(numpy_helper.from_array(packed, 'data'))
        if zp:
            zpk = pack_rows(zcodes, bits) if bits < 8 else zcodes
            inits.append(numpy_helper.from_array(zpk, 'zp'))
    else:
        inits.append(raw_tensor('data', dtype, shape, codes))
        if zp:
            inits.append(raw_tensor('zp', dtype, sshape, zcodes))
    attrs = {'block_size': block, 'bits': bits}
    if ga is not None:
        attrs['gather_axis'] = ga
    if qa is not None:
        attrs['quantize_axis'] = qa
    node = helper.make_node('GatherBlockQuantized', ['data', 'idx', 'scales'] +
                            (['zp'] if zp else []), ['y'], domain='com.microsoft', **attrs)
    idx = np.asarray(idx)
    ot = TensorProto.FLOAT if sdt == np.float32 else TensorProto.FLOAT16
    it = TensorProto.INT64 if idx.dtype == np.int64 else TensorProto.INT32
    g = helper.make_graph([node], 'gbq_' + name,
                          [helper.make_tensor_value_info('idx', it, idx.shape)],
                          [helper.make_tensor_value_info('y', ot, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 21),
                                            helper.make_opsetid('com.microsoft', 1)])
    m.ir_version = 10
    d = os.path.join(OUT, 'gbq_' + name)
    shutil.rmtree(d, ignore_errors=True)
    outs = graph_case(d, m, {'idx': idx})
    print(name, outs[0].shape, outs[0].dtype)


def main():
    U8 = TensorProto.UINT8
    case('u8_b4_zp', U8, [10, 32], np.array([[0, 9, -1], [3, -10, 3]]))
    case('u8_b4_nozp_f16', U8, [7, 80], np.array([6, 0, -7], np.int32), block=32, zp=False,
         sdt=np.float16)
    case('u8_b4_odd_blocks', U8, [6, 100], np.array([5, 1, -2]), block=16)
    case('u8_b8_zp', U8, [6, 48], np.array([2, -1], np.int32), bits=8)
    case('u8_b8_nozp', U8, [4, 40], np.array([1, 3]), bits=8, zp=False)
    case('u8_b2_zp', U8, [5, 48], np.array([4, 0, -3]), bits=2)
    case('u8_b2_nozp', U8, [3, 36], np.array([[2], [0]]), bits=2, zp=False, block=32)
    case('u8_b4_scalar_idx', U8, [5, 64], np.array(-2), block=32)
    case('u8_b4_3d', U8, [4, 3, 32], np.array([3, 0]), qa=2, block=16)
    case('i4_g0_q1_odd', INT4, [9, 33], np.array([8, -9, 4]), ga=0, qa=1)
    case('i4_nozp_f16', INT4, [6, 40], np.array([[1, 5], [-1, 0]], np.int32), zp=False,
         sdt=np.float16)
    case('u4_g1_q0', UINT4, [40, 6], np.array([5, -1, 2, 0]), ga=1, qa=0)
    case('u4_nozp', UINT4, [7, 20], np.array([6, 2]), zp=False)
    case('i4_3d_g1_q2', INT4, [2, 5, 20], np.array([4, -5]), ga=1, qa=2)
    case('i4_3d_g2_q0', INT4, [33, 3, 5], np.array([[4, 0], [-1, 2]]), ga=2, qa=0, block=32)
    case('i4_neg_axes', INT4, [5, 3, 18], np.array([2, 1]), ga=-2, qa=-1)
    case('u4_same_axis', UINT4, [32, 3], np.array([31, 0, 16, -32]), ga=0, qa=0)


if __name__ == '__main__':
    main()
