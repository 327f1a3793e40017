"""omopt.onnxslim: OnnxSlim's slim() and command over omopt.simplify, so that code written for
`onnxslim` runs after changing only its import line:

    from omopt import onnxslim                  # was: import onnxslim
    model = onnxslim.slim(model)                 # or slim('in.onnx', 'out.onnx')

    python3 -m omopt.onnxslim IN.onnx OUT.onnx [OnnxSlim's flags]

Each argument maps to omopt.simplify's; one with no counterpart is a ValueError naming it, or
(where it cannot change the model's results) a warning. docs/python.md has the table."""
import argparse
import os
import sys
import warnings

import numpy as np

from .onnxsim import print_simplifying_info

__all__ = ['slim', 'main', 'DEFAULT_FUSION_PATTERNS']


def _note(msg):
    """A warning attributed to the caller of slim."""
    warnings.warn('omopt.onnxslim: ' + msg, stacklevel=3)


# OnnxSlim's pattern names -> the omopt pass doing that rewrite (None: omopt has none apart)
DEFAULT_FUSION_PATTERNS = {
    'FusionPadConv': 'fuse_pad', 'FusionConvBN': 'fuse_conv_bn',
    'FusionConvAdd': 'fuse_conv_affine', 'FusionConvMul': 'fuse_conv_affine',
    'FusionGemm': 'fuse_matmul_add', 'EliminationTranspose': 'fuse_transposes',
    'FusionTranspose': 'fuse_transposes', 'EliminationSlice': None, 'EliminationReshape': None,
    'EliminationReshapeAs': None, 'EliminationUnsqueeze': None, 'EliminationConcat': None,
    'FusionGelu': None, 'FusionReduce': None, 'FusionConcatReshape': None,
}
OPTIMIZATIONS = {'dead_node_elimination': 'eliminate_dead',
                 'subexpression_elimination': 'merge_common', 'weight_tying': 'merge_common'}


def _names(specs, what):
    """OnnxSlim's NAME[:DTYPE] strings -> names; a DTYPE is refused (omopt keeps the types)."""
    out = []
    for s in specs or ():
        name, sep, dtype = s.rpartition(':')
        if not sep:
            name = s
        elif dtype:
            raise ValueError(f'omopt.onnxslim: {what} {s!r}: changing a {what[:-1]}\'s type '
                             '(NAME:DTYPE) has no counterpart in omopt; give NAME alone')
        out.append(name)
    return out or None


def _shapes(specs):
    shapes = {}
    for s in specs or ():
        name, sep, dims = s.rpartition(':')
        if not sep:
            raise ValueError(f'omopt.onnxslim: input shape {s!r}: NAME:D1,D2,...')
        shapes[name] = [int(d) if d.lstrip('-').isdigit() else d
                        for d in dims.split(',')] if dims else []
    return shapes


def _check_inputs(specs, model):
    """OnnxSlim's model_check_inputs: NAME:SHAPE (random values) or NAME:FILE.npy."""
    from ._modelinfo import ModelInfo
    from .onnxsim import _random_inputs
    given, shapes = {}, {}
    for s in specs or ():
        name, _, v = s.rpartition(':')
        if v.endswith('.npy'):
            given[name] = np.load(v)
        else:
            shapes[name] = [int(d) for d in v.split(',')]
    if not given and not shapes:
        return None
    return _random_inputs(ModelInfo(model).inputs, shapes, given)


def inspect_model(model, out=sys.stdout):
    """OnnxSlim's --inspect: the inputs, outputs and nodes per op type."""
    from ._modelinfo import ModelInfo
    info = ModelInfo(model)
    for a in info.inputs:
        print(f'input  {a.name}: {a.type} {a.shape}', file=out)
    for a in info.outputs:
        print(f'output {a.name}: {a.type} {a.shape}', file=out)
    for op, n in info.op_counts.items():
        print(f'{op}: {n}', file=out)
    return info


def slim(model, output_model=None, model_check=False, input_shapes=None, inputs=None,
         outputs=None, no_shape_infer=False, skip_optimizations=None, no_constant_folding=False,
         skip_fusion_patterns=None, size_threshold=None, inspect=False, dump_to_disk=False,
         save_as_external_data=False, model_check_inputs=None, verbose=False, dtype=None,
         **kwargs):
    """OnnxSlim's slim(): model (path or onnx.ModelProto, bytes too) simplified by
    omopt.simplify; returns the model (an onnx.ModelProto) when output_model is None, else
    saves it there and returns None. input_shapes ['x:1,3,224,224', ...]; inputs, outputs
    ['name', ...] cut the sub-model between them (NAME:DTYPE is refused); no_shape_infer:
    no shapes written; no_constant_folding; skip_fusion_patterns / skip_optimizations:
    OnnxSlim names mapped to omopt's passes (DEFAULT_FUSION_PATTERNS, OPTIMIZATIONS; a name
    without a pass of its own warns); size_threshold: fold_max_bytes; model_check (with
    model_check_inputs 'x:1,3,224,224' or 'x:data.npy'): omopt's check, raising
    omopt.CheckFailed when the outputs differ; dtype 'fp16' (omopt's measured half
    conversion), 'fp32' (a half model's compute back in float32; a float32 model stays as
    it is); save_as_external_data;
    inspect: prints the model's inputs, outputs and ops and returns None (no slimming)."""
    import omopt
    if kwargs:
        raise TypeError(f'slim() got unexpected keyword arguments {sorted(kwargs)}')
    if isinstance(model, list):
        raise ValueError('omopt.onnxslim: a list of models (merging) has no counterpart in omopt')
    if inspect:
        inspect_model(model.SerializeToString() if hasattr(model, 'SerializeToString') else model)
        return None
    if dump_to_disk:
        raise ValueError('omopt.onnxslim: dump_to_disk has no counterpart in omopt (use '
                         'inspect, or `omopt info`)')
    if dtype not in (None, 'fp16', 'fp32'):
        raise ValueError(f'omopt.onnxslim: dtype {dtype!r}: fp16 or fp32')
    skip = []
    for p in skip_fusion_patterns or ():
        if p not in DEFAULT_FUSION_PATTERNS:
            raise ValueError(f'omopt.onnxslim: fusion pattern {p!r} is not one of OnnxSlim\'s '
                             f'({", ".join(DEFAULT_FUSION_PATTERNS)})')
        if DEFAULT_FUSION_PATTERNS[p]:
            skip.append(DEFAULT_FUSION_PATTERNS[p])
        else:
            _note(f'fusion pattern {p!r} has no pass of its own in omopt (nothing '
                          'skipped for it)')
    for o in skip_optimizations or ():
        if o in OPTIMIZATIONS:
            skip.append(OPTIMIZATIONS[o])
        elif o == 'constant_folding':
            no_constant_folding = True
        else:
            _note(f'optimization {o!r} has no pass of its own in omopt')
    if no_constant_folding:
        skip += ['fold_constants', 'fold_shape_chains']
    data = model.SerializeToString() if hasattr(model, 'SerializeToString') else model
    shapes = _shapes(input_shapes) or None
    opts = dict(skip=sorted(set(skip)), input_shapes=shapes, overwrite_fixed_dims=bool(shapes),
                inputs=_names(inputs, 'inputs'), outputs=_names(outputs, 'outputs'),
                shapes=not no_shape_infer,
                fold_max_bytes=int(size_threshold) if size_threshold is not None else None,
                dtype=dtype,
                external_data=bool(save_as_external_data and output_model))
    if model_check:
        opts['check'] = 1
        opts['check_inputs'] = _check_inputs(model_check_inputs, data)
    if output_model is not None:
        omopt.simplify(data, output=os.fspath(output_model), **opts)
        return None
    out = omopt.simplify(data, **opts)
    try:
        import onnx
    except ImportError:
        return out
    return onnx.load_from_string(out)


def main(argv=None):
    """python3 -m omopt.onnxslim: OnnxSlim's command (its flags; docs/python.md)."""
    import omopt
    from ._modelinfo import ModelInfo
    p = argparse.ArgumentParser(prog='python3 -m omopt.onnxslim',
                                description='OnnxSlim\'s command over omopt.simplify')
    p.add_argument('input_model')
    p.add_argument('output_model', nargs='?', default=None)
    p.add_argument('--no-shape-infer', action='store_true')
    p.add_argument('--no-constant-folding', action='store_true')
    p.add_argument('--skip-fusion-patterns', nargs='+')
    p.add_argument('--skip-optimizations', nargs='+')
    p.add_argument('--size-threshold', type=int)
    p.add_argument('--input-shapes', nargs='+')
    p.add_argument('--inputs', nargs='+')
    p.add_argument('--outputs', nargs='+')
    p.add_argument('--dtype', choices=['fp16', 'fp32'])
    p.add_argument('--save-as-external-data', action='store_true')
    p.add_argument('--model-check', action='store_true')
    p.add_argument('--model-check-inputs', nargs='+')
    p.add_argument('--inspect', action='store_true')
    p.add_argument('--dump-to-disk', action='store_true')
    p.add_argument('--verbose', action='store_true')
    p.add_argument('-v', '--version', action='version', version=f'omopt {omopt.__version__}')
    a = p.parse_args(argv)
    if a.inspect:
        try:
            inspect_model(a.input_model)
        except omopt.OmoptError as e:
            print(f'omopt.onnxslim: {e}', file=sys.stderr)
            return 1
        return 0
    if a.output_model is None:
        p.error('give OUTPUT_MODEL (or --inspect)')
    try:
        before = ModelInfo(a.input_model)
        before.size = os.path.getsize(a.input_model)
        with warnings.catch_warnings():
            warnings.simplefilter('always')
            warnings.showwarning = lambda msg, *rest, **kw: print(f'WARNING: {msg}')
            slim(a.input_model, a.output_model, a.model_check, a.input_shapes, a.inputs,
                 a.outputs, a.no_shape_infer, a.skip_optimizations, a.no_constant_folding,
                 a.skip_fusion_patterns, a.size_threshold, False, a.dump_to_disk,
                 a.save_as_external_data, a.model_check_inputs, a.verbose, a.dtype)
    except omopt.CheckFailed as e:
        print(f'omopt.onnxslim: model check failed: {e.message}', file=sys.stderr)
        return 3
    except (omopt.OmoptError, ValueError) as e:
        print(f'omopt.onnxslim: {e}', file=sys.stderr)
        return 1
    after = ModelInfo(a.output_model)
    after.size = os.path.getsize(a.output_model)
    print_simplifying_info(before, after)
    return 0


if __name__ == '__main__':
    sys.exit(main())
