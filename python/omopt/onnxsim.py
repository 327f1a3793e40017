"""omopt.onnxsim: onnx-simplifier's API and command over omopt.simplify, so that code written for
`onnxsim` runs after changing only its import line:

    from omopt import onnxsim                    # was: import onnxsim
    model_simp, check = onnxsim.simplify(model, overwrite_input_shapes={'x': [1, 3, 224, 224]})

    python3 -m omopt.onnxsim IN.onnx OUT.onnx [check_n] [onnxsim's flags]

How each argument and flag maps to omopt's (and the ones with no counterpart): docs/python.md,
*onnx-simplifier's API*."""
import argparse
import re
import sys
import types
import warnings

import numpy as np

__all__ = ['simplify', 'main', 'model_info', 'print_simplifying_info',
           'DEFAULT_TENSOR_SIZE_THRESHOLD']

DEFAULT_TENSOR_SIZE_THRESHOLD = '1.5GB'

# onnx-optimizer's pass names (onnxsim's skipped_optimizers) -> the omopt pass doing that work
OPTIMIZERS = {
    'fuse_bn_into_conv': 'fuse_conv_bn',
    'fuse_add_bias_into_conv': 'fuse_conv_affine',
    'fuse_pad_into_conv': 'fuse_pad', 'fuse_pad_into_pool': 'fuse_pad',
    'fuse_consecutive_transposes': 'fuse_transposes', 'eliminate_nop_transpose': 'fuse_transposes',
    'fuse_matmul_add_bias_into_gemm': 'fuse_matmul_add',
    'eliminate_identity': 'eliminate_identities', 'eliminate_nop_dropout': 'eliminate_identities',
    'eliminate_nop_cast': 'eliminate_identities', 'eliminate_nop_pad': 'eliminate_identities',
    'eliminate_nop_reshape': 'eliminate_identities', 'eliminate_nop_expand': 'eliminate_identities',
    'eliminate_nop_flatten': 'eliminate_identities', 'eliminate_nop_concat': 'eliminate_identities',
    'eliminate_nop_split': 'eliminate_identities',
    'eliminate_duplicate_initializer': 'merge_common',
    'eliminate_common_subexpression': 'merge_common',
    'eliminate_if_with_const_cond': 'inline_if',
}
# onnx-optimizer names whose work omopt cannot leave out: skipping them skips nothing (a
# warning says why). Skipping eliminate_dead would keep every node a fold replaced, and the
# size rule would then give back the model unchanged, while onnxsim still folds.
NOT_SKIPPABLE = {
    'eliminate_deadend': 'omopt\'s folding removes the nodes it replaces, as onnxsim\'s does',
    'eliminate_unused_initializer': 'omopt drops the initializers a fold leaves unread',
}
# what perform_optimization=False (--skip-optimization with no names) leaves out: every rewrite
# but constant folding, shape inference and dead-node removal (onnxsim keeps those three)
OPTIMIZATION_PASSES = ('inline_if', 'eliminate_identities', 'fuse_transposes', 'fuse_pad',
                       'fuse_conv_bn', 'fuse_conv_affine', 'fuse_matmul_add', 'merge_common')


def _bytes(size):
    """onnxsim's size strings ('1.5GB', '1KB', '100MB', a number of bytes) -> bytes."""
    if isinstance(size, (int, np.integer)):
        return int(size)
    m = re.fullmatch(r'\s*([0-9]*\.?[0-9]+)\s*([KMGT]?B?)\s*', str(size), re.I)
    if not m:
        raise ValueError(f'tensor size {size!r}: a number of bytes, or with KB, MB, GB')
    unit = m.group(2).upper().rstrip('B')
    return int(float(m.group(1)) * 1024 ** ' KMGT'.index(unit or ' '))


def _note(msg, stacklevel=3):
    """A warning attributed to the caller of simplify (stacklevel: frames up to it)."""
    warnings.warn('omopt.onnxsim: ' + msg, stacklevel=stacklevel)


def _skips(perform_optimization, skip_fuse_bn, skipped_optimizers, skip_constant_folding):
    skip = []
    if not perform_optimization:
        skip += OPTIMIZATION_PASSES
    for name in skipped_optimizers or ():
        if name in OPTIMIZERS:
            skip.append(OPTIMIZERS[name])
        elif name in NOT_SKIPPABLE:
            _note(f'optimizer {name!r} is not skipped: {NOT_SKIPPABLE[name]}', 4)
        else:
            _note(f'optimizer {name!r} has no pass of its own in omopt (nothing skipped for '
                  'it); omopt\'s passes: docs/passes.md', 4)
    if skip_fuse_bn:
        skip.append('fuse_conv_bn')
    if skip_constant_folding:
        skip += ['fold_constants', 'fold_shape_chains']
    return sorted(set(skip))


def _shapes(shapes, inputs, what):
    """onnxsim's {name or None: [dims]} (None: the only input) checked against the inputs."""
    if not shapes:
        return {}
    names = [a.name for a in inputs]
    out = {}
    for name, dims in dict(shapes).items():
        if name is None:
            if len(names) != 1:
                raise RuntimeError('The model has more than 1 inputs, please use the format '
                                   f'"input_name:dim0,dim1,...,dimN" in {what}')
            name = names[0]
        if name not in names:
            raise RuntimeError(f'The model doesn\'t have input named "{name}"')
        out[name] = list(dims)
    return out


_NP = {'float': np.float32, 'double': np.float64, 'float16': np.float16, 'int64': np.int64,
       'int32': np.int32, 'int8': np.int8, 'uint8': np.uint8, 'bool': np.bool_,
       'int16': np.int16, 'uint16': np.uint16, 'uint32': np.uint32, 'uint64': np.uint64}


def _random_inputs(inputs, shapes, given, seed=0):
    """onnxsim's test inputs: given arrays, else random of the test shape (ints 0-9, floats in
    [0, 1), as omopt's check draws)."""
    rng = np.random.default_rng(seed)
    feeds = dict(given or {})
    for a in inputs:
        if a.name in feeds or a.name not in shapes:
            continue
        t = _NP.get(a.type[len('tensor('):-1])
        if t is None:
            continue
        dims = shapes[a.name]
        if t in (np.float32, np.float64, np.float16):
            feeds[a.name] = rng.random(dims).astype(t)
        elif t is np.bool_:
            feeds[a.name] = rng.integers(0, 2, dims).astype(bool)
        else:
            feeds[a.name] = rng.integers(0, 10, dims).astype(t)
    return feeds


def simplify(model, check_n=0, perform_optimization=True, skip_fuse_bn=False,
             overwrite_input_shapes=None, test_input_shapes=None, skipped_optimizers=None,
             skip_constant_folding=False, skip_shape_inference=False, input_data=None,
             dynamic_input_shape=False, custom_lib=None, include_subgraph=False,
             unused_output=None, tensor_size_threshold=DEFAULT_TENSOR_SIZE_THRESHOLD,
             mutable_initializer=False, *, input_shapes=None, **omopt_options):
    """onnxsim.simplify: returns (simplified onnx.ModelProto, check_ok). model: an
    onnx.ModelProto or a path (bytes too). check_n: N > 0 compares the simplified model with
    the original on N input sets (omopt's executor, omopt.simplify(check=N)); check_ok is
    False when they differ (the simplified model is still returned, as onnxsim does).
    overwrite_input_shapes (input_shapes, onnxsim's old name): {name: dims} (None as the name:
    the only input); a dim may also be a symbol string. test_input_shapes / input_data: the
    shapes or arrays of the check's inputs. skipped_optimizers: onnx-optimizer names mapped
    to omopt's passes (module OPTIMIZERS; a name without one warns). perform_optimization=
    False: only folding, shapes and dead nodes. skip_constant_folding: no folding.
    skip_shape_inference: no shapes written to value_info. unused_output: graph outputs to
    drop. tensor_size_threshold: given, folds nodes whose outputs are at most that size
    (fold_max_bytes); left at its default, omopt's rule applies (a fold never makes the model
    larger). include_subgraph, dynamic_input_shape: accepted (omopt simplifies subgraphs and
    dynamic shapes always). custom_lib: refused (ValueError: omopt does not load ONNX
    Runtime's custom-op libraries). mutable_initializer=True: initializers that are graph
    inputs are never folded by omopt anyway; others are constants (a warning says so).
    Other keyword arguments go to omopt.simplify (output=, external_data=, ...)."""
    import omopt
    from ._modelinfo import ModelInfo
    if custom_lib is not None:
        raise ValueError('omopt.onnxsim: custom_lib (an ONNX Runtime custom-op library) is not '
                         'supported: omopt passes nodes of unknown domains through, but cannot '
                         'run them for check_n')
    if mutable_initializer:
        _note('mutable_initializer=True has no counterpart in omopt: initializers are folded '
              'as constants')
    if overwrite_input_shapes is None:
        overwrite_input_shapes = input_shapes
    proto = hasattr(model, 'SerializeToString')
    data = model.SerializeToString() if proto else model
    info = ModelInfo(data)
    shapes = _shapes(overwrite_input_shapes, info.inputs, '--overwrite-input-shape')
    tests = _shapes(test_input_shapes, info.inputs, '--test-input-shape')
    outputs = keep_inputs = None
    if unused_output:
        names = [o.name for o in info.outputs]
        for n in unused_output:
            if n not in names:
                raise RuntimeError(f'The model doesn\'t have output named "{n}"')
        outputs = [n for n in names if n not in set(unused_output)]
        # onnxsim drops the outputs only: every graph input stays, read or not (a script
        # still feeds them; ONNX Runtime refuses a feed the model does not declare)
        keep_inputs = [a.name for a in info.inputs]
    fold = None
    if tensor_size_threshold != DEFAULT_TENSOR_SIZE_THRESHOLD:
        fold = _bytes(tensor_size_threshold)
    check_inputs = None
    if check_n:
        check_inputs = _random_inputs(info.inputs, {**shapes, **tests}, input_data) or None
    opts = dict(skip=_skips(perform_optimization, skip_fuse_bn, skipped_optimizers,
                            skip_constant_folding),
                fold_max_bytes=fold, input_shapes=shapes or None, outputs=outputs,
                inputs=keep_inputs,
                shapes=not skip_shape_inference, check=int(check_n or 0),
                check_inputs=check_inputs, overwrite_fixed_dims=bool(shapes))
    opts.update(omopt_options)
    ok = True
    try:
        out = omopt.simplify(data, **opts)
    except omopt.CheckFailed as e:
        print(f'omopt.onnxsim: check failed: {e.message}', file=sys.stderr)
        out, ok = e.model, False
    if isinstance(out, (bytes, bytearray)):
        try:
            import onnx
        except ImportError:
            return out, ok  # without onnx: the model's bytes
        out = onnx.load_from_string(bytes(out))
    return out, ok


def _parse_shapes(args):
    """onnxsim's "name:d0,d1" / "d0,d1" (the only input) strings -> {name or None: dims}; a
    dim that is not a number stays a symbol."""
    shapes = {}
    for x in args or ():
        name, sep, dims = x.rpartition(':')
        dd = [int(d) if d.lstrip('-').isdigit() else d for d in dims.split(',')] if dims else []
        shapes[name if sep else None] = dd
    return shapes


def _size(b):
    for unit in ('B', 'KB', 'MB', 'GB'):
        if b < 1024 or unit == 'GB':
            return f'{b:.1f}{unit}' if unit != 'B' else f'{b}B'
        b /= 1024


def _info(model):
    """A ModelInfo with .size (bytes) for print_simplifying_info: from a ModelInfo, an
    onnx.ModelProto, bytes or a path. Also onnxsim's names: op_nums, model_size."""
    import os
    from ._modelinfo import ModelInfo
    if not isinstance(model, ModelInfo):
        data = model.SerializeToString() if hasattr(model, 'SerializeToString') else model
        info = ModelInfo(data)
        info.size = os.path.getsize(data) if isinstance(data, str) else len(data)
        model = info
    model.op_nums, model.model_size = dict(model.op_counts), model.size
    return model


def print_simplifying_info(before, after, out=None):
    """onnxsim's before/after table (onnxsim.model_info.print_simplifying_info): nodes per op
    type and the model size; each model an onnx.ModelProto, bytes, a path or a ModelInfo.
    out: a file (None: sys.stdout as it is at the call, so redirect_stdout sees it)."""
    before, after = _info(before), _info(after)
    out = sys.stdout if out is None else out
    ops = sorted(set(before.op_counts) | set(after.op_counts))
    rows = [(op, str(before.op_counts.get(op, 0)), str(after.op_counts.get(op, 0)))
            for op in ops]
    rows.append(('Model Size', _size(before.size), _size(after.size)))
    w = [max(len(r[i]) for r in rows + [('', 'Original Model', 'Simplified Model')])
         for i in range(3)]
    line = '+' + '+'.join('-' * (n + 2) for n in w) + '+'
    fmt = lambda r: '| ' + ' | '.join(c.ljust(n) for c, n in zip(r, w)) + ' |'  # noqa: E731
    print(line, fmt(('', 'Original Model', 'Simplified Model')), line, sep='\n', file=out)
    for r in rows[:-1]:
        print(fmt(r), file=out)
    print(line, fmt(rows[-1]), line, sep='\n', file=out)


class _ModelInfoModule(types.ModuleType):
    """onnxsim.model_info: `from omopt.onnxsim import model_info` and
    `import omopt.onnxsim.model_info` as in onnxsim."""

    def __init__(self):
        super().__init__(__name__ + '.model_info', 'onnxsim.model_info over omopt\'s model info')
        self.print_simplifying_info = print_simplifying_info

    @property
    def ModelInfo(self):  # noqa: N802 (onnxsim's name)
        return lambda model: _info(model)


model_info = _ModelInfoModule()
sys.modules[model_info.__name__] = model_info


def __getattr__(name):
    if name == '__version__':  # omopt's version (not an onnxsim version)
        import omopt
        return omopt.__version__
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def main(argv=None):
    """python3 -m omopt.onnxsim: onnxsim's command (its flags; see docs/python.md)."""
    import os
    import omopt
    from ._modelinfo import ModelInfo
    p = argparse.ArgumentParser(prog='python3 -m omopt.onnxsim',
                                description='onnxsim\'s command over omopt.simplify')
    p.add_argument('input_model')
    p.add_argument('output_model')
    p.add_argument('check_n', nargs='?', type=int, default=0)
    p.add_argument('--check-n', type=int, dest='check_n_flag', metavar='N',
                   help='the same as the positional check_n')
    p.add_argument('--enable-fuse-bn', action='store_true')
    p.add_argument('--skip-fuse-bn', action='store_true')
    p.add_argument('--skip-optimization', type=str, nargs='*')
    p.add_argument('--skip-constant-folding', action='store_true')
    p.add_argument('--input-shape', type=str, nargs='+')
    p.add_argument('--overwrite-input-shape', type=str, nargs='+')
    p.add_argument('--test-input-shape', type=str, nargs='+')
    p.add_argument('--skip-optimizer', type=str, nargs='+')
    p.add_argument('--skip-shape-inference', action='store_true')
    p.add_argument('--dynamic-input-shape', action='store_true')
    p.add_argument('--input-data-path', type=str, nargs='+')
    p.add_argument('--custom-lib', type=str)
    p.add_argument('--include-subgraph', action='store_true')
    p.add_argument('--unused-output', type=str, nargs='+')
    p.add_argument('--no-large-tensor', type=str, nargs='?', const='1KB')
    p.add_argument('--tensor-size-threshold', type=str, default=None)
    p.add_argument('--mutable-initializer', action='store_true')
    p.add_argument('--save-as-external-data', action='store_true')
    p.add_argument('--version', action='version', version=f'omopt {omopt.__version__}')
    a = p.parse_args(argv)
    if a.check_n_flag is not None:
        if a.check_n and a.check_n != a.check_n_flag:
            p.error(f'check_n {a.check_n} and --check-n {a.check_n_flag}: give one of them')
        a.check_n = a.check_n_flag
    if a.input_shape and a.overwrite_input_shape:
        p.error('--input-shape is --overwrite-input-shape\'s old name: give one of them')
    if a.enable_fuse_bn:
        print('WARNING: "--enable-fuse-bn" is not needed: BatchNormalization is fused into Conv '
              'by default')
    if a.dynamic_input_shape:
        print('WARNING: "--dynamic-input-shape" is not needed: dynamic shapes are simplified '
              'as they are')
    if a.input_shape:
        print('WARNING: "--input-shape" is renamed to "--overwrite-input-shape".')
    if a.skip_optimizer:
        print('WARNING: "--skip-optimizer" is renamed to "--skip-optimization".')
        a.skip_optimization = a.skip_optimizer
    threshold = DEFAULT_TENSOR_SIZE_THRESHOLD
    if a.tensor_size_threshold:
        threshold = a.tensor_size_threshold
    if a.no_large_tensor is not None:
        # onnxsim: do not fold ops making tensors over SIZE; omopt's default folding never
        # makes the model larger, and a SIZE folds at most that per output
        threshold = a.no_large_tensor if a.no_large_tensor != '1KB' else threshold
    feeds = None
    if a.input_data_path:
        feeds = {}
        for x in a.input_data_path:
            name, _, path = x.rpartition(':')
            try:  # as onnxsim: np.load whatever the file's name (a .bin written by np.save)
                feeds[name] = np.load(path, allow_pickle=False)
            except (OSError, ValueError) as e:
                p.error(f'--input-data-path {x}: {e} (onnxsim reads each file with np.load: a '
                        'numpy file, whatever its name; raw bytes carry no type or shape)')
    perform = a.skip_optimization is None or len(a.skip_optimization) > 0
    print('Simplifying...')
    try:
        before = ModelInfo(a.input_model)
        before.size = os.path.getsize(a.input_model)
        with warnings.catch_warnings():
            warnings.simplefilter('always')
            warnings.showwarning = lambda msg, *rest, **kw: print(f'WARNING: {msg}')
            out, ok = simplify(a.input_model, a.check_n, perform, a.skip_fuse_bn,
                               _parse_shapes(a.overwrite_input_shape or a.input_shape),
                               _parse_shapes(a.test_input_shape),
                               a.skip_optimization or None, a.skip_constant_folding,
                               a.skip_shape_inference, feeds, False, a.custom_lib,
                               a.include_subgraph, a.unused_output, threshold,
                               a.mutable_initializer, output=a.output_model,
                               external_data=a.save_as_external_data)
    except (omopt.OmoptError, ValueError, RuntimeError) as e:
        print(f'omopt.onnxsim: {e}', file=sys.stderr)
        return 1
    if not isinstance(out, str):  # a failed check: onnxsim saves the model anyway
        with open(a.output_model, 'wb') as fh:
            fh.write(out if isinstance(out, (bytes, bytearray)) else out.SerializeToString())
    after = ModelInfo(a.output_model)
    after.size = os.path.getsize(a.output_model)
    if ok:
        print('Finish! Here is the difference:')
    else:
        print('Check failed. Please be careful to use the simplified model, or try specifying '
              '"--skip-fuse-bn" or "--skip-optimization" (run "python3 -m omopt.onnxsim -h" '
              'for details).')
        print('Here is the difference after simplification:')
    print_simplifying_info(before, after)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
