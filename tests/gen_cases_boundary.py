#!/usr/bin/python3
"""Test case for sequences, optionals and maps across the boundary (issue 35): one model whose
inputs and outputs are a sequence of tensors, an optional tensor, a map(int64, float), a
map(string, float), and ZipMap's sequence of map(int64, float) (as a classifier returns it).

Writes tests/cases/boundary/boxes/ in the ONNX backend-test layout (model.onnx,
test_data_set_0 with the optional present, test_data_set_1 with it empty). The outputs are the
inputs (Identity) and ZipMap's rows keyed by its labels (ZipMap's definition). test_boundary.c
feeds the same values through the C API and `omopt run`, tests/python/test_omopt.py through
Python.

    /usr/bin/python3 tests/gen_cases_boundary.py
"""
import os, shutil
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'cases', 'boundary', 'boxes')
ML = 'ai.onnx.ml'
LABELS = [7, -1, 3]


def map_type(key_type, value_type):
    t = onnx.TypeProto()
    t.map_type.key_type = key_type
    t.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(value_type, None))
    return t


def map_proto(d, key_type):
    m = onnx.MapProto()
    m.key_type = key_type
    if key_type == TensorProto.STRING:
        m.string_keys.extend([k.encode() for k in d])
    else:
        m.keys.extend(list(d))
    m.values.elem_type = onnx.SequenceProto.TENSOR
    for v in d.values():
        m.values.tensor_values.append(numpy_helper.from_array(np.array(v, np.float32)))
    return m


def seq_tensors(arrays):
    s = onnx.SequenceProto()
    s.elem_type = onnx.SequenceProto.TENSOR
    s.tensor_values.extend([numpy_helper.from_array(a) for a in arrays])
    return s


def seq_maps(ds, key_type):
    s = onnx.SequenceProto()
    s.elem_type = onnx.SequenceProto.MAP
    s.map_values.extend([map_proto(d, key_type) for d in ds])
    return s


def optional(a):
    o = onnx.OptionalProto()
    if a is not None:
        o.elem_type = onnx.OptionalProto.TENSOR
        o.tensor_value.CopyFrom(numpy_helper.from_array(a))
    return o


def main():
    F = TensorProto.FLOAT
    seq_t = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, None))
    mi_t = map_type(TensorProto.INT64, F)
    ms_t = map_type(TensorProto.STRING, F)
    zip_t = helper.make_sequence_type_proto(mi_t)
    inputs = [('s', seq_t), ('o', opt_t), ('mi', mi_t), ('ms', ms_t),
              ('x', helper.make_tensor_type_proto(F, ['N', 3]))]
    outputs = [('s2', seq_t), ('o2', opt_t), ('mi2', mi_t), ('ms2', ms_t), ('z', zip_t)]
    nodes = [helper.make_node('Identity', [i], [o]) for i, o in
             (('s', 's2'), ('o', 'o2'), ('mi', 'mi2'), ('ms', 'ms2'))]
    nodes.append(helper.make_node('ZipMap', ['x'], ['z'], domain=ML, classlabels_int64s=LABELS))
    graph = helper.make_graph(nodes, 'boxes',
                              [helper.make_value_info(n, t) for n, t in inputs],
                              [helper.make_value_info(n, t) for n, t in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                    helper.make_opsetid(ML, 1)])
    model.ir_version = 8
    onnx.checker.check_model(model)

    seq = [np.array([1.5, -2], np.float32), np.array([[3]], np.float32),
           np.zeros((0, 2), np.float32)]
    mi = {5: 0.25, -9: 1e30, 0: -3.5}
    ms = {'alpha': 1.0, '': -0.0, 'β': 2.5}
    x = np.array([[0.5, 0.25, 0.125], [1, -2, 3]], np.float32)
    zip_rows = [dict(zip(LABELS, map(float, row))) for row in x]
    sets = [(seq, np.array([4, 5, 6], np.float32), mi, ms, x, zip_rows),
            ([], None, {}, {}, x[:0], [])]
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    onnx.save(model, os.path.join(OUT, 'model.onnx'))
    for k, (sv, ov, miv, msv, xv, zv) in enumerate(sets):
        d = os.path.join(OUT, f'test_data_set_{k}')
        os.makedirs(d)
        ins = [seq_tensors(sv), optional(ov), map_proto(miv, TensorProto.INT64),
               map_proto(msv, TensorProto.STRING), numpy_helper.from_array(xv)]
        outs = ins[:4] + [seq_maps(zv, TensorProto.INT64)]
        for kind, items in (('input', ins), ('output', outs)):
            for i, msg in enumerate(items):
                with open(os.path.join(d, f'{kind}_{i}.pb'), 'wb') as f:
                    f.write(msg.SerializeToString())


if __name__ == '__main__':
    main()
