"""_commands.py — `python3 -m omopt run | info | dot | compare`: the C command's other commands
over the library (simplify is in __main__.py). What each prints follows `omopt COMMAND`."""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from . import InferenceSession, OmoptError, _Model, compare
from ._lib import DotOptions, Status, check, lib
from ._modelinfo import ModelInfo


def _load_tensor(path):
    if path.endswith('.npy'):
        return np.load(path, allow_pickle=False)
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        raise ValueError(f'{path}: .pb tensors need the onnx package (or give a .npy file)')
    t = onnx.TensorProto()
    with open(path, 'rb') as fh:
        t.ParseFromString(fh.read())
    return numpy_helper.to_array(t)


def _feeds(specs, folder, names):
    """--input NAME=FILE and --input-dir DIR (NAME.npy, or input_<i>.pb / .npy by position)."""
    feeds = {}
    if folder:
        for i, n in enumerate(names):
            for f in (f'{n}.npy', f'input_{i}.npy', f'input_{i}.pb', f'{n}.pb'):
                if os.path.isfile(os.path.join(folder, f)):
                    feeds[n] = _load_tensor(os.path.join(folder, f))
                    break
    for s in specs:
        name, sep, path = s.partition('=')
        if not sep or not name or not path:
            raise ValueError(f'--input wants NAME=FILE, got {s!r}')
        feeds[name] = _load_tensor(path)
    return feeds


def _save_tensor(path, a, fmt):
    if fmt == 'npy':
        np.save(path, np.asarray(a), allow_pickle=False)
        return
    from onnx import numpy_helper
    with open(path, 'wb') as fh:
        fh.write(numpy_helper.from_array(np.asarray(a)).SerializeToString())


def run(a):
    threads = a.threads or 1
    s = InferenceSession(a.model, exact=a.exact, threads=threads, optimize=not a.no_optimize,
                         max_memory=a.max_memory, max_run_ms=a.max_run_ms, layout=a.layout)
    if a.save_optimized:
        s._model.save(a.save_optimized)
    names = [i.name for i in s.get_inputs()]
    feeds = _feeds(a.input, a.input_dir, names)
    t0 = time.perf_counter()
    outs = s.run(None, feeds)
    ms = (time.perf_counter() - t0) * 1000
    for k in range(max(0, (a.bench or 0) - 1)):
        s.run(None, feeds)
    if a.bench:
        ms = (time.perf_counter() - t0) * 1000 / a.bench
    # outputs go to a new folder filled beside the target, renamed into place: a failed run
    # leaves nothing behind
    if a.output_dir:
        parent = os.path.dirname(os.path.abspath(a.output_dir))
        tmp = tempfile.mkdtemp(prefix='.omopt-out-', dir=parent)
        try:
            for i, y in enumerate(outs):
                _save_tensor(os.path.join(tmp, f'output_{i}.{a.output_format}'), y,
                             a.output_format)
            if os.path.isdir(a.output_dir):
                for f in os.listdir(tmp):
                    os.replace(os.path.join(tmp, f), os.path.join(a.output_dir, f))
                os.rmdir(tmp)
            else:
                os.rename(tmp, a.output_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    for o, y in zip(s.get_outputs(), outs):
        y = np.asarray(y) if not isinstance(y, list) else y
        desc = f'{y.dtype} {list(y.shape)}' if isinstance(y, np.ndarray) else type(y).__name__
        print(f'{o.name}: {desc}')
    print(f'{ms:.3f} ms a run' if a.bench else f'{ms:.3f} ms')
    return 0


def info(a):
    m = _Model(a.model)
    i = ModelInfo(m)
    ver = ctypes.c_char_p()
    prod = lib.om_model_producer(m.ptr, ctypes.byref(ver))
    print(f'ir_version: {lib.om_model_ir_version(m.ptr)}')
    print(f'producer: {(prod or b"").decode()} {(ver.value or b"").decode()}'.rstrip())
    for k in range(lib.om_model_opset_count(m.ptr)):
        v = ctypes.c_int64()
        d = lib.om_model_opset_import(m.ptr, k, ctypes.byref(v))
        print(f'opset: {(d or b"").decode() or "ai.onnx"} {v.value}')
    dims = lambda s: 'unknown rank' if s is None else '[' + ', '.join(  # noqa: E731
        '?' if d is None else str(d) for d in s) + ']'
    for x in i.inputs:
        print(f'input {x.name}: {x.type} {dims(x.shape)}')
    for x in i.outputs:
        print(f'output {x.name}: {x.type} {dims(x.shape)}')
    print(f'nodes: {i.nodes}')
    for op, n in i.op_counts.items():
        print(f'  {op}: {n}')
    print(f'initializers: {i.initializers} ({i.initializer_bytes} bytes)')
    return 0


def dot(a):
    m = _Model(a.model)
    diff = _Model(a.diff) if a.diff else None
    o = DotOptions(plan=int(a.plan), diff=diff.ptr if diff else None)
    text, n, st = ctypes.c_void_p(), ctypes.c_size_t(), Status()
    check(lib.om_model_dot(m.ptr, ctypes.byref(o), ctypes.byref(text), ctypes.byref(n),
                           ctypes.byref(st)), st)
    try:
        data = ctypes.string_at(text, n.value)
    finally:
        lib.om_free(text)
    out = a.output
    if out is None:
        sys.stdout.write(data.decode('utf-8', 'replace'))
        return 0
    ext = os.path.splitext(out)[1].lower()
    if ext in ('.svg', '.png', '.pdf'):
        exe = shutil.which('dot')
        if not exe:
            raise ValueError(f'{out}: drawing {ext} needs Graphviz\'s dot (apt-get install '
                             'graphviz); -o FILE.dot writes the text')
        subprocess.run([exe, '-T' + ext[1:], '-o', out], input=data, check=True)
    else:
        with open(out, 'wb') as fh:
            fh.write(data)
    print(out)
    return 0


def compare_cmd(a):
    with open(a.a, 'rb'):
        pass
    feeds = _feeds(a.input, a.input_dir, [x.name for x in ModelInfo(a.a).inputs])
    diffs = compare(a.a, a.b, inputs=feeds or None, rtol=a.rtol, atol=a.atol, seed=a.seed)
    first = None
    for d in diffs:
        mark = ''
        if first is None and d.state not in ('ok', 'skipped'):
            first, mark = d, '  <- first over'
        print(f'{d.name}: {d.state} shape {d.shape} max_abs {d.max_abs:.3g} max_rel '
              f'{d.max_rel:.3g}{mark}')
    if first is not None:
        print(f'first difference: {first.name} (A: {first.ref_node} {first.ref_op}; '
              f'B: {first.node} {first.op})')
        return 3
    return 0


def add_parsers(sub):
    r = sub.add_parser('run', help='run a model on inputs (.npy, or .pb with onnx)')
    r.add_argument('model')
    r.add_argument('--input', action='append', default=[], metavar='NAME=FILE')
    r.add_argument('--input-dir')
    r.add_argument('--output-dir')
    r.add_argument('--output-format', choices=['pb', 'npy'], default='npy')
    r.add_argument('--exact', action='store_true')
    r.add_argument('--threads', type=int, default=None)
    r.add_argument('--bench', type=int, default=None, metavar='N')
    r.add_argument('--no-optimize', action='store_true')
    r.add_argument('--save-optimized', metavar='FILE')
    r.add_argument('--max-memory', type=int, default=None)
    r.add_argument('--max-run-ms', type=int, default=None)
    r.add_argument('--layout', choices=['auto', 'blocked', 'nhwc', 'nchw'], default='auto')
    r.set_defaults(func=run)
    i = sub.add_parser('info', help='inputs, outputs, opsets and op histogram of a model')
    i.add_argument('model')
    i.set_defaults(func=info)
    d = sub.add_parser('dot', help='draw a model (Graphviz dot text; .svg/.png with dot)')
    d.add_argument('model')
    d.add_argument('-o', '--output')
    d.add_argument('--diff', metavar='SIMPLIFIED.onnx')
    d.add_argument('--plan', action='store_true')
    d.set_defaults(func=dot)
    c = sub.add_parser('compare', help='differences of every value two models share by name')
    c.add_argument('a')
    c.add_argument('b')
    c.add_argument('--input', action='append', default=[], metavar='NAME=FILE')
    c.add_argument('--input-dir')
    c.add_argument('--rtol', type=float)
    c.add_argument('--atol', type=float)
    c.add_argument('--seed', type=int)
    c.set_defaults(func=compare_cmd)


def dispatch(a):
    try:
        return a.func(a)
    except (OmoptError, ValueError, OSError) as e:
        print(f'omopt: {e}', file=sys.stderr)
        return 1
