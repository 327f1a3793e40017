"""python3 -m omopt simplify IN.onnx OUT.onnx [--skip PASS]... [--fold-max-bytes N] [--fold-qdq]
[--verify]: what `omopt simplify` writes, through the library (the same bytes)."""
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
    a = ap.parse_args(argv)
    try:
        simplify(a.input, skip=a.skip, fold_max_bytes=a.fold_max_bytes, fold_qdq=a.fold_qdq,
                 verify=a.verify, output=a.output)
    except OmoptError as e:
        print(f'omopt: {e}', file=sys.stderr)
        return 1
    print(f'{a.input}: {os.path.getsize(a.input)} -> {a.output}: '
          f'{os.path.getsize(a.output)} bytes')
    return 0


if __name__ == '__main__':
    sys.exit(main())
