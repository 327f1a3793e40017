#!/usr/bin/python3
"""Differential test cases for the elementwise operators and Cast, from ONNX Runtime.

Writes small one-node cases in the ONNX backend-test layout under tests/cases/elementwise/<case>/
(the conformance runner's 'cases' suite reads them). Inputs stay away from behaviour that is
undefined in ONNX Runtime's C++ (float -> int out of range, shifts by the width or more, integer
division by zero).

    /usr/bin/python3 tests/gen_cases_elementwise.py      # regenerate (deterministic)
"""
import os, shutil, sys
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.environ.get('OM_ORACLE', os.path.join(ROOT, '..', 'shared', 'oracle'))
if not os.path.isdir(ORACLE):
    ORACLE = '/work/shared/oracle'
sys.path.insert(0, ORACLE)
import mkcase  # noqa: E402

OUT = os.path.join(ROOT, 'tests', 'cases', 'elementwise')
rng = np.random.default_rng(20261129)
f32, f64, f16 = np.float32, np.float64, np.float16


def case(name, op, inputs, attrs=None, opset=17, **kw):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    try:
        mkcase.node_case(d, op, inputs, attrs or {}, opset=opset, **kw)
    except mkcase.OracleError as e:
        print('ORT refused %s: %s' % (name, str(e).splitlines()[-1][:200]))


def cast_case(name, x, to, attrs=None, opset=13, back=None):
    """Cast x to `to`; when numpy has no such type (bfloat16, float8), a second Cast takes the
    result back to `back` (exact) so that the case's output is a numpy type."""
    from onnx import helper
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    first = 'y' if back is None else 't'
    nodes = [helper.make_node('Cast', ['x'], [first], to=to, **(attrs or {}))]
    out_t = to
    if back is not None:
        nodes.append(helper.make_node('Cast', ['t'], ['y'], to=back))
        out_t = back
    g_in = [helper.make_tensor_value_info('x', mkcase._elem_type(x.dtype), x.shape)]
    g_out = [helper.make_tensor_value_info('y', out_t, None)]
    g = helper.make_graph(nodes, 'case_cast', g_in, g_out)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    try:
        mkcase.graph_case(d, m, {'x': x})
    except mkcase.OracleError as e:
        print('ORT refused %s: %s' % (name, str(e).splitlines()[-1][:200]))


def randn(*shape, dtype=f32, scale=3.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def randi(lo, hi, *shape, dtype=np.int32):
    return rng.integers(lo, hi, shape).astype(dtype)


special = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 100, -100, np.inf, -np.inf, np.nan],
                   dtype=f32)

shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)

# ---- broadcasting arithmetic ------------------------------------------------------------------
case('add_bcast_213_41', 'Add', {'a': randn(2, 1, 3), 'b': randn(4, 1)}, opset=14)
case('sub_bcast_i32', 'Sub', {'a': randi(-50, 50, 3, 1), 'b': randi(-50, 50, 1, 4)}, opset=14)
case('mul_u8_wrap', 'Mul', {'a': randi(0, 255, 2, 3, dtype=np.uint8),
                            'b': randi(0, 255, 3, dtype=np.uint8)}, opset=14)
case('add_i8_wrap', 'Add', {'a': np.array([127, -128, 100, -100], np.int8),
                            'b': np.array([1, -1, 100, -100], np.int8)}, opset=14)
case('div_i32_trunc_bcast', 'Div', {'a': randi(-100, 100, 2, 5),
                                    'b': np.array([7, -3, 2, -1, 9], np.int32)}, opset=14)
case('div_f32_specials', 'Div', {'a': special, 'b': np.array([0, 0, 0, -0.0, 3, 3, np.inf, 2, 2, 2,
                                                              np.inf, 1], f32)}, opset=14)
case('add_f16_bcast', 'Add', {'a': randn(3, 4, dtype=f16), 'b': randn(4, dtype=f16)}, opset=14)
case('mul_f64_scalar', 'Mul', {'a': randn(2, 3, dtype=f64), 'b': np.array(-1.5, f64)}, opset=14)
case('add_rank0', 'Add', {'a': np.array(1.25, f32), 'b': np.array(2.5, f32)}, opset=14)
case('add_empty', 'Add', {'a': np.zeros((0, 3), f32), 'b': randn(1, 3)}, opset=14)
case('mod_i32_sign_of_divisor', 'Mod', {'a': randi(-20, 20, 4, 6),
                                        'b': np.array([3, -3, 7, -7, 1, 5], np.int32)}, opset=13)
case('mod_i64_fmod', 'Mod', {'a': randi(-20, 20, 12, dtype=np.int64),
                             'b': randi(1, 6, 12, dtype=np.int64) * np.tile([1, -1], 6)},
     {'fmod': 1}, opset=13)
case('mod_f32_fmod', 'Mod', {'a': randn(10), 'b': randn(10)}, {'fmod': 1}, opset=13)
for e in [2.0, 3.0, 0.5, 1.7, -1.0]:
    case('pow_f32_scalar_%s' % str(e).replace('.', 'p').replace('-', 'm'), 'Pow',
         {'x': randn(24), 'y': np.array(e, f32)}, opset=15)
case('pow_f32_i32_exp', 'Pow', {'x': randn(3, 4), 'y': randi(-3, 4, 4)}, opset=15)
case('pow_i64_i64', 'Pow', {'x': randi(-5, 6, 8, dtype=np.int64),
                            'y': randi(0, 6, 8, dtype=np.int64)}, opset=15)
case('prelu_channel', 'PRelu', {'x': randn(1, 3, 2, 2), 'slope': randn(3, 1, 1)}, opset=16)

# ---- comparisons, logic, bits -----------------------------------------------------------------
for op in ['Equal', 'Less', 'LessOrEqual', 'Greater', 'GreaterOrEqual']:
    case(op.lower() + '_f32_nan_bcast', op, {'a': special.reshape(3, 4),
                                             'b': np.array([0.5, np.nan, -0.0, 100], f32)},
         opset=16, out_types=[np.bool_])
case('greater_i64_big', 'Greater', {'a': np.array([2**62, -2**62, 5], np.int64),
                                    'b': np.array([2**62 - 1], np.int64)}, opset=13,
     out_types=[np.bool_])
case('equal_bool', 'Equal', {'a': np.array([True, False, True]), 'b': np.array([True])}, opset=13)
case('and_bcast', 'And', {'a': rng.random((2, 3, 1)) > 0.5, 'b': rng.random((4,)) > 0.5}, opset=7)
case('xor_bcast', 'Xor', {'a': rng.random((3, 1)) > 0.5, 'b': rng.random((1, 3)) > 0.5}, opset=7)
case('not_3d', 'Not', {'x': rng.random((2, 2, 2)) > 0.5}, opset=1)
case('bitshift_u32_right', 'BitShift', {'x': randi(0, 2**31, 6, dtype=np.uint32),
                                        'y': randi(0, 31, 6, dtype=np.uint32)},
     {'direction': 'RIGHT'}, opset=11)
case('bitwise_xor_i16', 'BitwiseXor', {'a': randi(-300, 300, 2, 3, dtype=np.int16),
                                       'b': randi(-300, 300, 3, dtype=np.int16)}, opset=18)
case('isinf_positive_only', 'IsInf', {'x': special}, {'detect_negative': 0}, opset=10,
     out_types=[np.bool_])
case('isnan', 'IsNaN', {'x': special}, opset=13, out_types=[np.bool_])

# ---- Where, variadic, Clip --------------------------------------------------------------------
case('where_3way_bcast', 'Where', {'c': rng.random((2, 1, 1)) > 0.5, 'x': randn(1, 3, 1),
                                   'y': randn(4)}, opset=16, out_types=[f32])
case('where_i64', 'Where', {'c': np.array([True, False, True]), 'x': np.array([1, 2, 3], np.int64),
                            'y': np.array(-7, np.int64)}, opset=16, out_types=[np.int64])
xs = {'a': np.array([1, np.nan, 3, -1], f32), 'b': np.array(2, f32),
      'c': np.array([[0, 5, np.nan, -3]], f32)}
for op in ['Sum', 'Mean', 'Max', 'Min']:
    case(op.lower() + '_3_bcast_nan', op, xs, opset=13)
case('max_i64', 'Max', {'a': np.array([2**62, -5], np.int64), 'b': np.array([[1], [2**61]],
                                                                            np.int64)}, opset=13)
case('min_u8', 'Min', {'a': randi(0, 255, 5, dtype=np.uint8), 'b': randi(0, 255, 5, dtype=np.uint8),
                       'c': randi(0, 255, 1, dtype=np.uint8)}, opset=13)
case('clip_f32_both', 'Clip', {'x': special, 'lo': np.array(-1, f32), 'hi': np.array(2, f32)},
     opset=13)
case('clip_i32_min_only', 'Clip', {'x': randi(-10, 10, 8), 'lo': np.array(-2, np.int32),
                                   'hi': None}, opset=13)
case('clip_f32_max_only', 'Clip', {'x': randn(8), 'lo': None, 'hi': np.array(0.5, f32)}, opset=13)
case('clip_attr_opset6', 'Clip', {'x': randn(8)}, {'min': -0.5, 'max': 1.0}, opset=6)

# ---- unary ------------------------------------------------------------------------------------
for op, attrs, opset in [('Round', {}, 11), ('Floor', {}, 13), ('Ceil', {}, 13), ('Sign', {}, 13),
                         ('Abs', {}, 13), ('Neg', {}, 13), ('Relu', {}, 14),
                         ('LeakyRelu', {'alpha': 0.2}, 16), ('Elu', {'alpha': 0.7}, 6),
                         ('Selu', {}, 6), ('HardSigmoid', {'alpha': 0.3, 'beta': 0.4}, 6),
                         ('HardSwish', {}, 14), ('Softplus', {}, 1), ('Sigmoid', {}, 13),
                         ('Tanh', {}, 13), ('Erf', {}, 13), ('Exp', {}, 13), ('Log', {}, 13),
                         ('Sqrt', {}, 13), ('Reciprocal', {}, 13), ('Softsign', {}, 1),
                         ('Gelu', {}, 20), ('Gelu', {'approximate': 'tanh'}, 20),
                         ('Celu', {'alpha': 2.0}, 12), ('ThresholdedRelu', {'alpha': 0.5}, 10),
                         ('Mish', {}, 18), ('Atan', {}, 7), ('Sinh', {}, 9)]:
    name = op.lower() + ('_' + attrs['approximate'] if 'approximate' in attrs else '')
    case(name + '_specials', op, {'x': np.concatenate([special, randn(12)])}, attrs, opset=opset)
case('relu_i8', 'Relu', {'x': randi(-128, 127, 8, dtype=np.int8)}, opset=14)
case('abs_i16_min', 'Abs', {'x': np.array([-32768, -5, 7], np.int16)}, opset=13)
case('neg_i32', 'Neg', {'x': np.array([-2**31 + 1, 0, 12], np.int32)}, opset=13)
case('sign_i64', 'Sign', {'x': np.array([-2**62, 0, 3], np.int64)}, opset=13)
case('round_f16_half_even', 'Round', {'x': np.arange(-3, 3.5, 0.5).astype(f16)}, opset=11)

# ---- Cast ------------------------------------------------------------------------------------
ties = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65519, 65520, -1e9, np.nan, -0.0, 2**-24, 2**-25,
                 3 * 2**-26], f32)
TO = {'f16': 10, 'bf16': 16, 'f32': 1, 'f64': 11, 'i32': 6, 'u8': 2, 'bool': 9, 'i64': 7,
      'e4m3fn': 17, 'e4m3fnuz': 18, 'e5m2': 19, 'e5m2fnuz': 20}
cast_case('cast_f32_f16_ties', ties, TO['f16'])
cast_case('cast_f32_bf16_ties', np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, -2, np.nan], f32),
          TO['bf16'], back=TO['f32'])
cast_case('cast_f32_i32', np.array([2.7, -2.7, 0.5, -0.5, 1e9], f32), TO['i32'])
cast_case('cast_f32_u8', np.array([0, 1.9, 254.9, 17.5], f32), TO['u8'])
cast_case('cast_f32_bool', np.array([0, -0.0, 0.1, np.nan, -3], f32), TO['bool'])
cast_case('cast_i64_f16', np.array([65504, 65520, -70000, 2049, 2051], np.int64), TO['f16'])
cast_case('cast_f64_f32', np.array([1 + 2**-24, 1 + 3 * 2**-24, 1e300, 1e-50], f64), TO['f32'])
cast_case('cast_i64_f32', np.array([2**24 + 1, 2**24 + 3, -(2**62) - 1], np.int64), TO['f32'])
cast_case('cast_f16_f64', ties[np.abs(ties) < 65504].astype(f16), TO['f64'])
f8x = np.array([448, 464, 480, 495, 496, 500, 57344, 61440, 65535, 65536, 1e6, -1e6, 2**-10,
                3 * 2**-11, 2**-17, -0.0, np.inf, -np.inf, np.nan, 0.3, -1.7], f32)
for t in ['e4m3fn', 'e4m3fnuz', 'e5m2', 'e5m2fnuz']:
    for sat in [1, 0]:
        cast_case('cast_f32_%s_sat%d' % (t, sat), f8x, TO[t], {'saturate': sat}, opset=19,
                  back=TO['f32'])
case('castlike_f32_i64', 'CastLike', {'x': np.array([1.5, -7.9], f32),
                                      'like': np.array([0], np.int64)}, opset=15,
     out_types=[np.int64])
print('cases:', len(os.listdir(OUT)))
