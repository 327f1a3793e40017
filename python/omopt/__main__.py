"""python3 -m omopt simplify|run|info|dot|compare: the commands of `omopt` through the library
(run, info, dot, compare: _commands.py).

python3 -m omopt simplify IN.onnx OUT.onnx [--skip PASS]... [--fold-max-bytes N] [--fold-qdq]
[--verify] [--external-data] [--input-shape NAME:D1,D2,...]... [--outputs A,B] [--inputs C,D]
[--drop-unused-outputs] [--no-shapes | --all-shapes] [--no-inline-functions] [--check N]
[--input NAME=FILE.npy]... [--rtol R] [--atol A] [--seed S] [--dtype fp16|bf16|fp32]
[--keep-fp32 NODE]... [--no-keep-measure] [--opset N]: what `omopt simplify` writes, through the
library (the same bytes); exit 3 when the check fails, as the command. A flag whose meaning is
the command's has its help text (HELP, tests/python/test_main_commands.py compares them)."""
import argparse
import os
import sys

import numpy as np

from . import CheckFailed, OmoptError, simplify

# `omopt simplify --help`'s text of the flags that mean here what they mean there
HELP = {
    '--fold-max-bytes': (
        'fold a node when each of its outputs is at most N bytes, even if the model grows '
        '(default: a fold may not make the saved model larger: its outputs may exceed the '
        'constants it frees by at most 4096 bytes, covered by what other rewrites saved)'
    ),
    '--fold-qdq': (
        'also fold QuantizeLinear/DequantizeLinear on constants (a float model; by default a '
        'quantized model stays quantized)'
    ),
    '--verify': (
        'check the IR after every pass'
    ),
    '--external-data': (
        'write weights of 1 KiB and more to a file beside OUT.onnx named by their content, '
        'OUT.onnx.<16 hex digits>.data, in place before OUT.onnx (so that a reader of '
        'OUT.onnx, even while other saves to it run, finds the weights it names or none, '
        "never others); the one a replaced OUT.onnx named goes (OnnxSlim's "
        '--save-as-external-data)'
    ),
    '--drop-unused-outputs': (
        'optional node outputs nothing reads become "" (Dropout\'s mask, BatchNormalization\'s '
        "statistics, LSTM's Y_h, ...)"
    ),
    '--no-shapes': (
        "do not write the inferred shapes to value_info (onnxsim's --skip-shape-inference, "
        "OnnxSlim's --no-shape-infer)"
    ),
    '--all-shapes': (
        'accepted for older scripts: every inferred shape is written'
    ),
    '--no-inline-functions': (
        "keep calls of model-local functions (default: functions of the model's own domains "
        'are inlined, --inline-functions)'
    ),
    '--rtol': (
        "tolerance of a float tensor: max|a-b| <= A + R*max|a|, a the original's (default R "
        '1e-4, A 1e-5); other types must be equal'
    ),
    '--atol': (
        "tolerance of a float tensor: max|a-b| <= A + R*max|a|, a the original's (default R "
        '1e-4, A 1e-5); other types must be equal'
    ),
    '--seed': (
        'seed of the random inputs (default: fixed, so runs repeat)'
    ),
    '--keep-fp32': (
        'keep node NODE float32 too (repeatable)'
    ),
    '--no-keep-measure': (
        'convert every node the types admit, without measuring'
    ),
    '--opset': (
        'convert the simplified model to default-domain opset N (7 to 23), up or down, as '
        "ONNX's version converter does; a node the target cannot express is an error and "
        'nothing is written'
    ),
}

OPSET_MIN, OPSET_MAX = 7, 23  # OM_OPSET_CONVERT_MIN/MAX (include/omopt.h)


def main(argv=None):
    ap = argparse.ArgumentParser(prog='python3 -m omopt')
    sub = ap.add_subparsers(dest='command', required=True)
    s = sub.add_parser('simplify', help='simplify IN.onnx into OUT.onnx')
    s.add_argument('input')
    s.add_argument('output')
    s.add_argument('--skip', action='append', default=[], metavar='PASS')
    s.add_argument('--fold-max-bytes', type=int, default=None, metavar='N',
                   help=HELP['--fold-max-bytes'])
    s.add_argument('--fold-qdq', action='store_true', help=HELP['--fold-qdq'])
    s.add_argument('--verify', action='store_true', help=HELP['--verify'])
    s.add_argument('--external-data', action='store_true', help=HELP['--external-data'])
    s.add_argument('--input-shape', action='append', default=[], metavar='NAME:D1,D2,...')
    s.add_argument('--outputs', action='append', default=[], metavar='A,B')
    s.add_argument('--inputs', action='append', default=[], metavar='C,D')
    s.add_argument('--drop-unused-outputs', action='store_true',
                   help=HELP['--drop-unused-outputs'])
    s.add_argument('--no-shapes', action='store_true', help=HELP['--no-shapes'])
    s.add_argument('--all-shapes', action='store_true', help=HELP['--all-shapes'])
    s.add_argument('--inline-functions', dest='inline', action='store_true', default=True)
    s.add_argument('--no-inline-functions', dest='inline', action='store_false',
                   help=HELP['--no-inline-functions'])
    s.add_argument('--check', type=int, default=0, metavar='N')
    s.add_argument('--input', dest='feeds', action='append', default=[],
                   metavar='NAME=FILE.npy')
    s.add_argument('--rtol', type=float, default=None, metavar='R', help=HELP['--rtol'])
    s.add_argument('--atol', type=float, default=None, metavar='A', help=HELP['--atol'])
    s.add_argument('--seed', type=int, default=None, metavar='N', help=HELP['--seed'])
    s.add_argument('--dtype', choices=['fp16', 'bf16', 'fp32'], default=None)
    s.add_argument('--keep-fp32', action='append', default=[], metavar='NODE',
                   help=HELP['--keep-fp32'])
    s.add_argument('--no-keep-measure', action='store_true', help=HELP['--no-keep-measure'])
    s.add_argument('--opset', type=str, default=None, metavar='N', help=HELP['--opset'])
    from . import _commands
    _commands.add_parsers(sub)
    a = ap.parse_args(argv)
    if a.command != 'simplify':
        return _commands.dispatch(a)
    opset = None
    if a.opset is not None:  # the command's check and message
        try:
            opset = int(a.opset, 10)
        except ValueError:
            opset = 0
        if not OPSET_MIN <= opset <= OPSET_MAX:
            s.error(f'--opset needs an opset from {OPSET_MIN} to {OPSET_MAX}')
    given = {}
    for spec in a.feeds:
        name, sep, path = spec.partition('=')
        if not sep or not name or not path:
            ap.error(f'--input wants NAME=FILE.npy, got {spec!r}')
        given[name] = np.load(path)
    shapes = {}
    for spec in a.input_shape:
        name, sep, dims = spec.rpartition(':')
        if not sep or not name:
            ap.error(f'bad input shape {spec!r} (NAME:D1,D2,...)')
        shapes[name] = [int(d) if d.isdigit() else d for d in dims.split(',')] if dims else []
    split = lambda v: [n for x in v for n in x.split(',')] or None  # noqa: E731
    kept = []
    try:
        simplify(a.input, skip=a.skip, fold_max_bytes=a.fold_max_bytes, fold_qdq=a.fold_qdq,
                 verify=a.verify, input_shapes=shapes, outputs=split(a.outputs),
                 inputs=split(a.inputs), drop_unused_outputs=a.drop_unused_outputs,
                 shapes=not a.no_shapes and ('all' if a.all_shapes else True), inline_functions=a.inline, output=a.output,
                 check=a.check, check_inputs=given or None, rtol=a.rtol, atol=a.atol,
                 seed=a.seed, dtype=a.dtype, keep_fp32=a.keep_fp32, dtype_report=kept,
                 dtype_measure=not a.no_keep_measure, external_data=a.external_data,
                 opset=opset)
    except CheckFailed as e:
        print(f'omopt: {e}', file=sys.stderr)
        return 3
    except (OmoptError, ValueError) as e:
        print(f'omopt: {e}', file=sys.stderr)
        return 1
    for node, op, why, rel in kept:
        print(f'kept in float32: {node or "(unnamed)"} ({op}): {why}', file=sys.stderr)
    print(f'{a.input}: {os.path.getsize(a.input)} -> {a.output}: '
          f'{os.path.getsize(a.output)} bytes')
    return 0


if __name__ == '__main__':
    sys.exit(main())
