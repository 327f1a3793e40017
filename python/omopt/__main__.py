"""python3 -m omopt simplify IN.onnx OUT.onnx [--skip PASS]... [--fold-max-bytes N] [--fold-qdq]
[--verify] [--input-shape NAME:D1,D2,...]... [--outputs A,B] [--inputs C,D]
[--drop-unused-outputs] [--no-shapes] [--no-inline-functions]: what `omopt simplify` writes,
through the library (the same bytes)."""
import argparse
import os
import sys

from . import OmoptError, simplify


def main(argv=None):
    ap = argparse.ArgumentParser(prog='python3 -m omopt')
    sub = ap.add_subparsers(dest='command', required=True)
    s = sub.add_parser('simplify', help='simplify IN.onnx into OUT.onnx')
    s.add_argument('input')
    s.add_argument('output')
    s.add_argument('--skip', action='append', default=[], metavar='PASS')
    s.add_argument('--fold-max-bytes', type=int, default=None, metavar='N')
    s.add_argument('--fold-qdq', action='store_true')
    s.add_argument('--verify', action='store_true')
    s.add_argument('--input-shape', action='append', default=[], metavar='NAME:D1,D2,...')
    s.add_argument('--outputs', action='append', default=[], metavar='A,B')
    s.add_argument('--inputs', action='append', default=[], metavar='C,D')
    s.add_argument('--drop-unused-outputs', action='store_true')
    s.add_argument('--no-shapes', action='store_true')
    s.add_argument('--inline-functions', dest='inline', action='store_true', default=True)
    s.add_argument('--no-inline-functions', dest='inline', action='store_false')
    a = ap.parse_args(argv)
    shapes = {}
    for spec in a.input_shape:
        name, sep, dims = spec.rpartition(':')
        if not sep or not name:
            ap.error(f'bad input shape {spec!r} (NAME:D1,D2,...)')
        shapes[name] = [int(d) if d.isdigit() else d for d in dims.split(',')] if dims else []
    split = lambda v: [n for x in v for n in x.split(',')] or None  # noqa: E731
    try:
        simplify(a.input, skip=a.skip, fold_max_bytes=a.fold_max_bytes, fold_qdq=a.fold_qdq,
                 verify=a.verify, input_shapes=shapes, outputs=split(a.outputs),
                 inputs=split(a.inputs), drop_unused_outputs=a.drop_unused_outputs,
                 shapes=not a.no_shapes, inline_functions=a.inline, output=a.output)
    except (OmoptError, ValueError) as e:
        print(f'omopt: {e}', file=sys.stderr)
        return 1
    print(f'{a.input}: {os.path.getsize(a.input)} -> {a.output}: '
          f'{os.path.getsize(a.output)} bytes')
    return 0


if __name__ == '__main__':
    sys.exit(main())
