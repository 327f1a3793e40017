#!/usr/bin/python3
"""Test cases for the ai.onnx.ml ops on strings and maps (kernels/ml): LabelEncoder (opsets 1,
2, 4), CategoryMapper, ZipMap, DictVectorizer, CastMap.

Writes one-node cases in the ONNX backend-test layout (model.onnx, test_data_set_0/input_N.pb,
output_N.pb: TensorProto, MapProto or SequenceProto of MapProto, as onnx's backend tests store
them) under tests/cases/ml_maps/<case>/. The expected values are computed here from the ops'
definitions (ONNX's text; ONNX Runtime's choices where the text says nothing: docs/ops.md).

    /usr/bin/python3 tests/gen_cases_ml_maps.py
"""
import math, os, shutil
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'cases', 'ml_maps')
ML = 'ai.onnx.ml'


def tensor_type(dt):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dt)] if dt != 'str' else TensorProto.STRING


def map_proto(d, key_type, value_dtype):
    m = onnx.MapProto()
    m.key_type = key_type
    if key_type == TensorProto.STRING:
        m.string_keys.extend([k.encode() for k in d])
    else:
        m.keys.extend(list(d))
    m.values.elem_type = onnx.SequenceProto.TENSOR
    for v in d.values():
        arr = np.array(v, dtype=object if value_dtype == 'str' else value_dtype)
        m.values.tensor_values.append(numpy_helper.from_array(arr))
    return m


def seq_of_maps(ds, key_type, value_dtype):
    s = onnx.SequenceProto()
    s.elem_type = onnx.SequenceProto.MAP
    for d in ds:
        s.map_values.append(map_proto(d, key_type, value_dtype))
    return s


def map_type(key_type, value_type):
    t = onnx.TypeProto()
    t.map_type.key_type = key_type
    t.map_type.value_type.CopyFrom(value_type)
    return t


def arr(values, dtype):
    if dtype == 'str':
        return np.array(values, dtype=object)
    return np.array(values, dtype=dtype)


def write(name, node, inputs, outputs, opset):
    """inputs/outputs: [(name, type_proto, proto message)]"""
    graph = helper.make_graph(
        [node], name,
        [helper.make_value_info(n, t) for n, t, _ in inputs],
        [helper.make_value_info(n, t) for n, t, _ in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                    helper.make_opsetid(ML, opset)])
    model.ir_version = 8
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(model, os.path.join(d, 'model.onnx'))
    for kind, items in (('input', inputs), ('output', outputs)):
        for i, (_, _, msg) in enumerate(items):
            with open(os.path.join(d, 'test_data_set_0', f'{kind}_{i}.pb'), 'wb') as f:
                f.write(msg.SerializeToString())


def tensor_case(name, op, x, y, attrs, opset):
    xt = helper.make_tensor_type_proto(tensor_type(x.dtype if x.dtype != object else 'str'),
                                       x.shape)
    yt = helper.make_tensor_type_proto(tensor_type(y.dtype if y.dtype != object else 'str'),
                                       y.shape)
    node = helper.make_node(op, ['X'], ['Y'], domain=ML, **attrs)
    write(name, node, [('X', xt, numpy_helper.from_array(x))],
          [('Y', yt, numpy_helper.from_array(y))], opset)


def encode(x, keys, values, default):
    """Y[k] = values[first key equal to X[k]] (floats: by bits, every NaN one key)"""
    def canon(v):
        if isinstance(v, float) and math.isnan(v):
            return 'nan'
        if isinstance(v, (float, np.floating)):
            return ('f', np.float64(v).tobytes())
        return v
    table = {}
    for k, v in zip(keys, values):
        table.setdefault(canon(k), v)
    return [table.get(canon(e), default) for e in x]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    # LabelEncoder-1: classes_strings, both directions
    cls = ['cat', 'dog', 'emu']
    x = arr(['dog', 'ant', 'emu', 'cat', ''], 'str')
    y = arr([cls.index(s) if s in cls else 7 for s in x], np.int64)
    tensor_case('label_encoder1_str_int', 'LabelEncoder', x, y,
                {'classes_strings': cls, 'default_int64': 7}, 1)
    x = arr([[2, -1], [0, 3]], np.int64)
    y = arr([[cls[i] if 0 <= i < 3 else 'none' for i in r] for r in x.tolist()], 'str')
    tensor_case('label_encoder1_int_str', 'LabelEncoder', x, y,
                {'classes_strings': cls, 'default_string': 'none'}, 1)
    # LabelEncoder-2: float keys (NaN and -0.0 are keys of their own), string values, the
    # default default_string
    kf = [1.5, float('nan'), -0.0, 2.25, 1.5]
    vs = ['a', 'nan', 'negzero', 'b', 'later']
    x = arr([1.5, float('nan'), 0.0, -0.0, 2.25, 3.0], np.float32)
    y = arr(encode([float(v) for v in x], kf, vs, '_Unused'), 'str')
    tensor_case('label_encoder2_float_str', 'LabelEncoder', x, y,
                {'keys_floats': kf, 'values_strings': vs}, 2)
    x = arr([[5, -3, 9], [7, 5, 0]], np.int64)
    y = arr([encode(r, [5, 7, 9], [0.5, -1.25, 8.0], -0.0) for r in x.tolist()], np.float32)
    tensor_case('label_encoder2_int_float', 'LabelEncoder', x, y,
                {'keys_int64s': [5, 7, 9], 'values_floats': [0.5, -1.25, 8.0]}, 2)
    x = arr(['b', 'zz', 'a'], 'str')
    y = arr(encode(list(x), ['a', 'b'], [10, 20], -1), np.int64)
    tensor_case('label_encoder2_str_int_default', 'LabelEncoder', x, y,
                {'keys_strings': ['a', 'b'], 'values_int64s': [10, 20]}, 2)
    # LabelEncoder-4: tensor attributes of the wider types
    keys = arr([3, -4, 100], np.int32)
    vals = arr([0.25, 1e300, -7.5], np.float64)
    x = arr([[100, 3], [0, -4]], np.int32)
    y = arr([encode(r, keys.tolist(), vals.tolist(), 42.5) for r in x.tolist()], np.float64)
    tensor_case('label_encoder4_int32_double', 'LabelEncoder', x, y,
                {'keys_tensor': numpy_helper.from_array(keys, 'keys_tensor'),
                 'values_tensor': numpy_helper.from_array(vals, 'values_tensor'),
                 'default_tensor': numpy_helper.from_array(arr([42.5], np.float64), 'd')}, 4)
    keys = arr([1, 2], np.int16)
    vals = arr(['one', 'two'], 'str')
    x = arr([2, 1, 5], np.int16)
    y = arr(encode(x.tolist(), [1, 2], ['one', 'two'], 'zero'), 'str')
    tensor_case('label_encoder4_int16_str', 'LabelEncoder', x, y,
                {'keys_tensor': numpy_helper.from_array(keys, 'keys_tensor'),
                 'values_tensor': numpy_helper.from_array(vals, 'values_tensor'),
                 'default_string': 'zero'}, 4)
    # CategoryMapper, both directions
    cs, ci = ['red', 'green', 'blue'], [10, 20, 30]
    x = arr([['blue', 'x'], ['red', 'green']], 'str')
    y = arr([encode(r, cs, ci, -5) for r in x.tolist()], np.int64)
    tensor_case('category_mapper_str_int', 'CategoryMapper', x, y,
                {'cats_strings': cs, 'cats_int64s': ci, 'default_int64': -5}, 1)
    x = arr([30, 11, 10], np.int64)
    y = arr(encode(x.tolist(), ci, cs, '_Unused'), 'str')
    tensor_case('category_mapper_int_str', 'CategoryMapper', x, y,
                {'cats_strings': cs, 'cats_int64s': ci}, 1)
    # ZipMap: the rows of X as maps (a list of dicts, as ONNX Runtime's Python API returns)
    for name, labels, kt in (('zipmap_strings', ['b', 'a', 'c'], TensorProto.STRING),
                             ('zipmap_int64s', [7, -1, 3], TensorProto.INT64)):
        x = arr([[0.1, 0.2, 0.7], [1.0, -2.0, 3.5]], np.float32)
        attr = 'classlabels_strings' if kt == TensorProto.STRING else 'classlabels_int64s'
        node = helper.make_node('ZipMap', ['X'], ['Z'], domain=ML, **{attr: labels})
        out_t = helper.make_sequence_type_proto(map_type(
            kt, helper.make_tensor_type_proto(TensorProto.FLOAT, None)))
        maps = [dict(zip(labels, row)) for row in x.tolist()]
        write(name, node,
              [('X', helper.make_tensor_type_proto(TensorProto.FLOAT, x.shape),
                numpy_helper.from_array(x))],
              [('Z', out_t, seq_of_maps(maps, kt, np.float32))], 1)
    # DictVectorizer: the map's values at their keys' places; [1, V] as ONNX Runtime
    for name, voc, d, kt, vt in (
            ('dictvectorizer_str_float', ['a', 'c', 'b', 'z'], {'a': 4.0, 'c': 8.0, 'q': 1.0},
             TensorProto.STRING, np.float32),
            ('dictvectorizer_int_double', [5, 1, 9], {9: 0.5, 1: -2.0}, TensorProto.INT64,
             np.float64),
            ('dictvectorizer_int_str', [5, 1, 9], {9: 'nine', 5: 'five'}, TensorProto.INT64,
             'str')):
        attr = 'string_vocabulary' if kt == TensorProto.STRING else 'int64_vocabulary'
        node = helper.make_node('DictVectorizer', ['X'], ['Y'], domain=ML, **{attr: voc})
        zero = '' if vt == 'str' else 0
        y = arr([[d.get(k, zero) for k in voc]], vt)
        ett = TensorProto.STRING if vt == 'str' else tensor_type(vt)
        in_t = map_type(kt, helper.make_tensor_type_proto(ett, None))
        write(name, node, [('X', in_t, map_proto(d, kt, vt))],
              [('Y', helper.make_tensor_type_proto(ett, y.shape), numpy_helper.from_array(y))],
              1)
    # CastMap: the values in ascending key order (DENSE) or at their keys (SPARSE)
    d = {5: 2.5, -1: 7.0, 2: -3.75}
    for name, attrs, y in (
            ('castmap_dense_float', {}, arr([[d[k] for k in sorted(d)]], np.float32)),
            ('castmap_dense_int64', {'cast_to': 'TO_INT64'},
             arr([[int(d[k]) for k in sorted(d)]], np.int64)),
            ('castmap_dense_string', {'cast_to': 'TO_STRING'},
             arr([['%f' % d[k] for k in sorted(d)]], 'str'))):
        node = helper.make_node('CastMap', ['X'], ['Y'], domain=ML, **attrs)
        in_t = map_type(TensorProto.INT64,
                                          helper.make_tensor_type_proto(TensorProto.FLOAT, None))
        ett = TensorProto.STRING if y.dtype == object else tensor_type(y.dtype)
        write(name, node, [('X', in_t, map_proto(d, TensorProto.INT64, np.float32))],
              [('Y', helper.make_tensor_type_proto(ett, y.shape), numpy_helper.from_array(y))],
              1)
    d = {3: '1.5', 0: '-2', 9: '4'}
    for name, attrs, y in (
            ('castmap_sparse_float', {'map_form': 'SPARSE', 'max_map': 5},
             arr([[-2.0, 0, 0, 1.5, 0]], np.float32)),
            ('castmap_sparse_string', {'map_form': 'SPARSE', 'max_map': 4,
                                       'cast_to': 'TO_STRING'},
             arr([['-2', '0.f', '0.f', '1.5']], 'str'))):
        node = helper.make_node('CastMap', ['X'], ['Y'], domain=ML, **attrs)
        in_t = map_type(TensorProto.INT64,
                                          helper.make_tensor_type_proto(TensorProto.STRING, None))
        ett = TensorProto.STRING if y.dtype == object else tensor_type(y.dtype)
        write(name, node, [('X', in_t, map_proto(d, TensorProto.INT64, 'str'))],
              [('Y', helper.make_tensor_type_proto(ett, y.shape), numpy_helper.from_array(y))],
              1)


if __name__ == '__main__':
    main()
