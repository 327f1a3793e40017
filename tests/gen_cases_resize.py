#!/usr/bin/python3
"""Generate the differential cases of Resize's align_corners mapping.

    /usr/bin/python3 tests/gen_cases_resize.py [--shared ../shared]

Writes tests/cases/resize/<name>/ in the ONNX backend-test layout.

align_corners maps output index x to x * (in - 1) / (length_resized - 1). ONNX Runtime takes
length_resized = the output extent floor(in * scale); the ONNX reference (whose outputs are the
ONNX node tests' expected values) takes in * scale unfloored when scales are given. The two
agree when in * scale is an integer and when sizes are given. omopt follows the reference
(docs/ops.md). So:
  - ac_scales_*: scales with a non-integer in * scale: expected outputs from the ONNX reference
    (onnx.backend.test.case.node.resize.interpolate_nd of python3-onnx), NOTE.txt with what
    ONNX Runtime gives instead (the script checks that it does differ);
  - ac_sizes_*: the same resizes through sizes: ONNX Runtime's outputs (the script checks that
    the reference agrees).
Deterministic: the same seed gives the same folders.
"""
import argparse, os, shutil, subprocess, sys
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument('--shared', default=None, help='default: ../shared beside the checkout (or '
                'beside the main checkout when run from a git worktree)')
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
if not args.shared:
    args.shared = os.path.join(here, '..', '..', 'shared')
    if not os.path.isdir(args.shared):
        common = subprocess.run(['git', '-C', here, 'rev-parse', '--git-common-dir'],
                                capture_output=True, text=True).stdout.strip()
        args.shared = os.path.join(here, common, '..', '..', 'shared')
sys.path.insert(0, os.path.join(args.shared, 'oracle'))
import mkcase  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from onnx.backend.test.case.node.resize import (interpolate_nd, linear_coeffs,  # noqa: E402
                                                cubic_coeffs)

ROOT = os.path.join(here, 'cases', 'resize')
rng = np.random.default_rng(20261129)


def model(x, scales=None, sizes=None, mode='linear', exclude_outside=0):
    names = ['x', '', 'scales' if scales is not None else '']
    inits = []
    if scales is not None:
        inits.append(numpy_helper.from_array(scales, 'scales'))
    if sizes is not None:
        names.append('sizes')
        inits.append(numpy_helper.from_array(sizes, 'sizes'))
    node = helper.make_node('Resize', names, ['y'], mode=mode,
                            coordinate_transformation_mode='align_corners',
                            exclude_outside=exclude_outside)
    g = helper.make_graph([node], 'case_Resize',
                          [helper.make_tensor_value_info('x', onnx.TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info('y', onnx.TensorProto.FLOAT, None)],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 8
    return m


def write(d, m, x, y, note=None):
    shutil.rmtree(d, ignore_errors=True)
    ds = os.path.join(d, 'test_data_set_0')
    os.makedirs(ds)
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info('y', onnx.TensorProto.FLOAT,
                                                             y.shape))
    onnx.save(m, os.path.join(d, 'model.onnx'))
    open(os.path.join(ds, 'input_0.pb'), 'wb').write(
        numpy_helper.from_array(x, 'x').SerializeToString())
    open(os.path.join(ds, 'output_0.pb'), 'wb').write(
        numpy_helper.from_array(y, 'y').SerializeToString())
    if note:
        open(os.path.join(d, 'NOTE.txt'), 'w').write(note.strip() + '\n')


def pair(name, shape, scales, mode, exclude_outside=0, A=-0.75):
    x = (rng.integers(-40, 40, int(np.prod(shape))) / 8).astype(np.float32).reshape(shape)
    scales = np.array(scales, dtype=np.float32)
    coeffs = linear_coeffs if mode == 'linear' else (lambda r: cubic_coeffs(r, A))
    ref = interpolate_nd(x, coeffs, scale_factors=list(scales),
                         coordinate_transformation_mode='align_corners',
                         exclude_outside=bool(exclude_outside)).astype(np.float32)
    sizes = np.array(ref.shape, dtype=np.int64)
    # ONNX Runtime on the scales form: the floored output length
    ms = model(x, scales=scales, mode=mode, exclude_outside=exclude_outside)
    tmp = os.path.join(ROOT, '.tmp.onnx')
    onnx.save(ms, tmp)
    ort = mkcase.ort_run(tmp, {'x': x})[0]
    os.remove(tmp)
    assert ort.shape == ref.shape and not np.allclose(ort, ref, rtol=1e-3, atol=1e-7), name
    write(os.path.join(ROOT, 'ac_scales_' + name), ms, x, ref, note=(
        'Expected outputs come from the ONNX reference (python3-onnx interpolate_nd), not from '
        'ONNX Runtime.\nalign_corners with scales: the reference maps with in * scale '
        '(unfloored) = %s; ONNX Runtime with the output extent %s and gives:\n%r\n' % (
            ['%.7g' % (np.float32(s) * n) for s, n in zip(scales, shape)], list(ref.shape),
            ort)))
    # the sizes form: ONNX Runtime and the reference agree
    mz = model(x, sizes=sizes, mode=mode, exclude_outside=exclude_outside)
    d = os.path.join(ROOT, 'ac_sizes_' + name)
    shutil.rmtree(d, ignore_errors=True)
    out = mkcase.graph_case(d, mz, {'x': x})[0]
    sref = interpolate_nd(x, coeffs, output_size=list(sizes),
                          coordinate_transformation_mode='align_corners',
                          exclude_outside=bool(exclude_outside)).astype(np.float32)
    assert np.allclose(out, sref, rtol=1e-5, atol=1e-6), name


def symbolic_channels():
    """Resizes of a graph input whose channels are symbolic, run with 3: the planner's probe
    (64 channels for a symbolic dim) must not keep the first Resize's output channel-blocked
    between the two (a run failed with 'planned blocked with 64 channels'; found by
    fuzz_run). ONNX Runtime's outputs (in * scale is whole: it agrees with the reference)."""
    up = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), 'up')
    down = numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), 'down')
    nodes = [helper.make_node('Resize', ['x', '', 'up'], ['r1'], mode='linear',
                              coordinate_transformation_mode='align_corners'),
             helper.make_node('Resize', ['r1', '', 'down'], ['y'], mode='nearest',
                              nearest_mode='floor')]
    g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info(
        'x', onnx.TensorProto.FLOAT, [1, 'C', 'H', 'W'])], [helper.make_tensor_value_info(
            'y', onnx.TensorProto.FLOAT, [1, 'C', None, None])], [up, down])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])
    m.ir_version = 8
    d = os.path.join(ROOT, 'symbolic_channels_linear_nearest')
    shutil.rmtree(d, ignore_errors=True)
    x = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
    mkcase.graph_case(d, m, {'x': x})


os.makedirs(ROOT, exist_ok=True)
pair('linear_down', (1, 1, 3, 5), [1, 1, 0.7, 0.55], 'linear')
pair('linear_up', (2, 3, 4), [1, 1.3, 1.9], 'linear')
pair('cubic_down', (1, 1, 5, 6), [1, 1, 0.75, 0.6], 'cubic')
pair('cubic_up_exclude', (1, 2, 3, 4), [1, 1, 1.5, 1.7], 'cubic', exclude_outside=1)
symbolic_channels()
print('wrote', sorted(os.listdir(ROOT)))
