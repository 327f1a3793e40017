#!/usr/bin/python3
"""Oracle case for `--dtype fp32` (issue 36) in tests/widen/: a model that is float16 from
the start, and ONNX Runtime 1.30's outputs on it.

    model_fp16.onnx  X float16 [2,8] -> MatMul(X, W) + B -> Cast(to float) -> Sigmoid
                     -> Cast(to float16) -> Mul(S) -> Softmax -> Y float16 [2,4]
                     (W [8,4], B [4], S [] float16 initializers; opset 17)
    x.npy            the input (float16)
    ort_y.npy        ONNX Runtime on model_fp16.onnx (float16)
    model_fp32.onnx  X float [2,8] -> Softmax(MatMul(Relu(MatMul(X, W1) + B1), W2)) -> Y
                     (for the round trip fp32 -> fp16 -> fp32; no oracle needed)

    /usr/bin/python3 tests/gen_cases_widen.py    # regenerate (deterministic)
"""
import os, subprocess, tempfile
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'widen')
ORACLE = os.environ.get('OMOPT_SHARED', os.path.join(ROOT, '..', 'shared'))
rng = np.random.default_rng(36)
F16 = np.float16

inits = [nh.from_array(rng.uniform(-1, 1, (8, 4)).astype(F16), 'W'),
         nh.from_array(rng.uniform(-1, 1, (4,)).astype(F16), 'B'),
         nh.from_array(np.array(3.5, F16), 'S')]
nodes = [h.make_node('MatMul', ['X', 'W'], ['xw']), h.make_node('Add', ['xw', 'B'], ['a']),
         h.make_node('Cast', ['a'], ['a32'], to=T.FLOAT), h.make_node('Sigmoid', ['a32'], ['s32']),
         h.make_node('Cast', ['s32'], ['s16'], to=T.FLOAT16),
         h.make_node('Mul', ['s16', 'S'], ['m']), h.make_node('Softmax', ['m'], ['Y'], axis=-1)]
g = h.make_graph(nodes, 'widen', [h.make_tensor_value_info('X', T.FLOAT16, [2, 8])],
                 [h.make_tensor_value_info('Y', T.FLOAT16, [2, 4])], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
os.makedirs(OUT, exist_ok=True)
onnx.save(m, os.path.join(OUT, 'model_fp16.onnx'))
f32 = [nh.from_array(rng.uniform(-1, 1, (8, 16)).astype(np.float32), 'W1'),
       nh.from_array(rng.uniform(-1, 1, (16,)).astype(np.float32), 'B1'),
       nh.from_array(rng.uniform(-1, 1, (16, 4)).astype(np.float32), 'W2')]
nodes = [h.make_node('MatMul', ['X', 'W1'], ['h1']), h.make_node('Add', ['h1', 'B1'], ['h2']),
         h.make_node('Relu', ['h2'], ['h3']), h.make_node('MatMul', ['h3', 'W2'], ['h4']),
         h.make_node('Softmax', ['h4'], ['Y'], axis=-1)]
g = h.make_graph(nodes, 'round_trip', [h.make_tensor_value_info('X', T.FLOAT, [2, 8])],
                 [h.make_tensor_value_info('Y', T.FLOAT, [2, 4])], f32)
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
m.ir_version = 8
onnx.save(m, os.path.join(OUT, 'model_fp32.onnx'))
x = rng.uniform(-2, 2, (2, 8)).astype(F16)
np.save(os.path.join(OUT, 'x.npy'), x)
with tempfile.TemporaryDirectory() as d:
    p = subprocess.run(['node', os.path.join(ORACLE, 'oracle', 'ort_run.js'),
                        os.path.join(OUT, 'model_fp16.onnx'), d, f'X={os.path.join(OUT, "x.npy")}'],
                       capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr)
    np.save(os.path.join(OUT, 'ort_y.npy'), np.load(os.path.join(d, '0.npy')))
