#!/usr/bin/python3
"""Oracle case for overridable initializers (issue 35) in tests/overridable/: a graph
input that has an initializer of its name (IR >= 4) is optional, the initializer its default.

    model.onnx      X [N,3] -> Y = Relu(MatMul(X, W * C) + B), Z = ReduceMax(W * C, axis 0)
                    with W [3,4] and B [4] inputs that have initializers (IR 8, opset 13), C a
                    plain initializer: W * C folds only if W is taken as a constant
    model_ir3.onnx  the same at IR 3 (opset 8): every
                    initializer listed as an input, none overridable
    x.npy w.npy b.npy          inputs and override values
    default_{y,z}.npy          ONNX Runtime 1.30 on model.onnx fed X alone
    override_w_{y,z}.npy       ... with W fed w.npy (B its initializer)
    override_wb_{y,z}.npy      ... with W and B fed
    ir3_{y,z}.npy              ONNX Runtime on model_ir3.onnx fed X alone

onnxruntime-node (the oracle) passes only the feeds its inputNames list, and lists no
input that has an initializer (at any IR version): a feed for W is silently dropped. So the
override outputs are ONNX Runtime's on model.onnx with W and B made plain inputs (their
initializers removed), fed the same values: what ONNX Runtime's C and Python APIs compute
when W and B are fed (they accept feeds for overridable initializers).

    /usr/bin/python3 tests/gen_cases_overridable.py    # regenerate (deterministic)
"""
import os, subprocess, tempfile
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'tests', 'overridable')
ORACLE = os.environ.get('OMOPT_SHARED', os.path.join(ROOT, '..', 'shared'))
rng = np.random.default_rng(35)
W0 = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
B0 = rng.uniform(-1, 1, (4,)).astype(np.float32)
C0 = rng.uniform(0.5, 2, (3, 4)).astype(np.float32)


def model(ir, with_inits=('W', 'B')):
    inits = [nh.from_array(C0, 'C')]
    inits += [nh.from_array(v, n) for n, v in (('W', W0), ('B', B0)) if n in with_inits]
    ins = [h.make_tensor_value_info('X', T.FLOAT, ['N', 3]),
           h.make_tensor_value_info('W', T.FLOAT, [3, 4]),
           h.make_tensor_value_info('B', T.FLOAT, [4])]
    if ir < 4:
        ins.append(h.make_tensor_value_info('C', T.FLOAT, [3, 4]))
    nodes = [h.make_node('Mul', ['W', 'C'], ['WC']), h.make_node('MatMul', ['X', 'WC'], ['XW']),
             h.make_node('Add', ['XW', 'B'], ['XWB']), h.make_node('Relu', ['XWB'], ['Y']),
             h.make_node('ReduceMax', ['WC'], ['Z'], axes=[0], keepdims=0)]
    outs = [h.make_tensor_value_info('Y', T.FLOAT, ['N', 4]),
            h.make_tensor_value_info('Z', T.FLOAT, [4])]
    m = h.make_model(h.make_graph(nodes, 'overridable', ins, outs, inits),
                     opset_imports=[h.make_opsetid('', 8 if ir < 4 else 13)])
    m.ir_version = ir
    return m


def ort(m, feeds, prefix):
    with tempfile.TemporaryDirectory() as d:
        onnx.save(m, os.path.join(d, 'm.onnx'))
        args = []
        for n, v in feeds.items():
            np.save(os.path.join(d, n + '.npy'), v)
            args.append(f'{n}={os.path.join(d, n + ".npy")}')
        p = subprocess.run(['node', os.path.join(ORACLE, 'oracle', 'ort_run.js'),
                            os.path.join(d, 'm.onnx'), os.path.join(d, 'o')] + args,
                           capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(p.stderr)
        for i, o in enumerate('yz'):
            np.save(os.path.join(OUT, f'{prefix}_{o}.npy'), np.load(os.path.join(d, 'o', f'{i}.npy')))


os.makedirs(OUT, exist_ok=True)
x = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
w = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
b = rng.uniform(-1, 1, (4,)).astype(np.float32)
for n, v in (('x', x), ('w', w), ('b', b)):
    np.save(os.path.join(OUT, n + '.npy'), v)
onnx.save(model(8), os.path.join(OUT, 'model.onnx'))
onnx.save(model(3), os.path.join(OUT, 'model_ir3.onnx'))
ort(model(8), {'X': x}, 'default')
plain = model(8, with_inits=())
ort(plain, {'X': x, 'W': w, 'B': B0}, 'override_w')
ort(plain, {'X': x, 'W': w, 'B': b}, 'override_wb')
ort(model(3), {'X': x}, 'ir3')
