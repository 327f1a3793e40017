"""omopt: simplify ONNX models and run them, over the omopt C library (libomopt.so.0).

    import omopt
    smaller = omopt.simplify(model)                 # onnx.ModelProto, bytes or a path
    sess = omopt.InferenceSession(smaller)
    [y] = sess.run(None, {'x': x})                  # numpy arrays in and out

Errors are raised as omopt.OmoptError subclasses (InvalidModel, InvalidInput, Unsupported,
IoError, NoMemory, Internal) carrying .kind, .node, .op and .message.
"""
import contextlib
import ctypes
import math
import os
import signal
import tempfile
import threading
import time
import warnings
import weakref

import numpy as np

from . import _lib, _ort
from ._lib import SessionOptions as _CSessionOptions
from ._lib import (MAP, OPTIONAL, SEQUENCE, STRING, CheckOptions, CheckReport, CompareReport,
                   DtypeOptions, DtypeReport, SaveOptions,
                   InputShape, IoInfo, ProfileRow, Seq, SimplifyOptions, Status, Str, Tensor,
                   check, lib,
                   OmoptError, InvalidModel, InvalidInput, Unsupported, IoError, NoMemory,
                   Internal, CheckFailed)

__all__ = ['simplify', 'compare', 'Difference', 'InferenceSession', 'NodeArg', 'OmoptError',
           'InvalidModel', 'InvalidInput', 'Unsupported', 'IoError', 'NoMemory', 'Internal',
           'CheckFailed', 'SessionOptions', 'RunOptions', 'GraphOptimizationLevel',
           'ExecutionMode', '__version__']
SessionOptions, RunOptions = _ort.SessionOptions, _ort.RunOptions
GraphOptimizationLevel, ExecutionMode = _ort.GraphOptimizationLevel, _ort.ExecutionMode


def __dir__():
    # the public API only (not the modules this one imports); submodules: omopt.onnxruntime,
    # omopt.onnxsim, omopt.onnxslim
    return sorted(__all__ + ['onnxruntime', 'onnxsim', 'onnxslim'])

__version__ = lib.om_version().decode()

# ONNX TensorProto.DataType <-> numpy; bfloat16 (16) comes back as its uint16 bit patterns
_NP = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
       7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
       14: np.complex64, 15: np.complex128, 16: np.uint16}
_ONNX = {np.dtype(v): k for k, v in _NP.items() if k != 16}
_NAMES = {1: 'float', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64',
          8: 'string', 9: 'bool', 10: 'float16', 11: 'double', 12: 'uint32', 13: 'uint64',
          14: 'complex64', 15: 'complex128', 16: 'bfloat16'}


class _Model:
    """An om_model loaded from a path, bytes or an onnx.ModelProto; freed with the object."""

    def __init__(self, model):
        self.ptr = ctypes.c_void_p()
        self.kind = 'path'
        self._buf = None
        st = Status()
        if isinstance(model, (str, os.PathLike)):
            check(lib.om_model_load(os.fsencode(model), ctypes.byref(self.ptr),
                                    ctypes.byref(st)), st)
            return
        if hasattr(model, 'SerializeToString'):
            self.kind = 'proto'
            model = model.SerializeToString()
        elif isinstance(model, (bytes, bytearray, memoryview)):
            self.kind = 'bytes'
        else:
            raise TypeError('omopt: a model is a path, bytes or an onnx.ModelProto, not '
                            + type(model).__name__)
        # the model borrows its weights from this buffer: it lives as long as the model
        self._buf = ctypes.create_string_buffer(bytes(model), len(model))
        check(lib.om_model_load_memory(self._buf, len(model), None, ctypes.byref(self.ptr),
                                       ctypes.byref(st)), st)

    def save_bytes(self):
        """The bytes of the saved model: om_model_save into a private folder, read back."""
        with tempfile.TemporaryDirectory(prefix='omopt-') as d:
            path = os.path.join(d, 'model.onnx')
            self.save(path)
            if len(os.listdir(d)) > 1:
                raise Unsupported('Unsupported', '', '', 'the model is over 2 GB: its weights '
                                  'go to an external-data file; give simplify an output path')
            with open(path, 'rb') as f:
                return f.read()

    def saved_size(self):
        """The bytes a save would write with every weight inline, value_info not counted
        (what simplify's size rule compares; no file written)."""
        st, n = Status(), ctypes.c_size_t()
        check(lib.om_model_saved_size_without_value_info(self.ptr, ctypes.byref(n),
                                                         ctypes.byref(st)), st)
        return n.value

    def save(self, path, external_data=False):
        """om_model_save, the one save of the library, the command and this package: temporary
        files beside path renamed over it, the files the model reads never replaced,
        external data (external_data=True, and over 2 GB) in a file named by its content,
        in place before the model (include/omopt.h)."""
        st, opts = Status(), SaveOptions(external_data=int(bool(external_data)))
        with _signals_held():
            kind = lib.om_model_save(self.ptr, os.fsencode(path), ctypes.byref(opts),
                                     ctypes.byref(st))
        check(kind, st)

    def __del__(self):
        if getattr(self, 'ptr', None):
            lib.om_model_free(self.ptr)
            self.ptr = None


_HELD = tuple(getattr(signal, n) for n in ('SIGTERM', 'SIGHUP') if hasattr(signal, n))


@contextlib.contextmanager
def _signals_held():
    """SIGTERM and SIGHUP, while at their default action (which ends the process at once,
    leaving a save's temporary files), are held off during a save on the main thread and
    raised again after it. Python's own handlers (SIGINT's KeyboardInterrupt) run once the
    library call has returned anyway, and Python ignores SIGXFSZ (a write over `ulimit -f`
    fails and the save removes its files)."""
    held = [] if threading.current_thread() is not threading.main_thread() else [
        s for s in _HELD if signal.getsignal(s) == signal.SIG_DFL]
    got = []
    for s in held:
        signal.signal(s, lambda sig, frame: got.append(sig))
    try:
        yield
    finally:
        for s in held:
            signal.signal(s, signal.SIG_DFL)
        for s in got:
            os.kill(os.getpid(), s)


def _names(names, what):
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    names = [n.encode() for n in names]
    if not names:
        raise ValueError(f'omopt: {what} is empty (None: not a sub-model)')
    return (ctypes.c_char_p * (len(names) + 1))(*names, None)


def _shapes(input_shapes):
    """{name: [dim, ...]} (a dim: an int >= 0 or a symbol string) -> InputShape array."""
    if not input_shapes:
        return None
    arr = (InputShape * len(input_shapes))()
    for s, (name, dims) in zip(arr, input_shapes.items()):
        dims = list(dims)
        if len(dims) > len(s.dims):
            raise ValueError(f'omopt: input shape of {name!r}: rank {len(dims)} is over '
                             f'{len(s.dims)}')
        s.name, s.rank = name.encode(), len(dims)
        for i, d in enumerate(dims):
            if isinstance(d, str) and d:
                s.dims[i], s.dim_params[i] = -1, d.encode()
            elif isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0:
                s.dims[i] = int(d)
            else:
                raise ValueError(f'omopt: input shape of {name!r}: dim {i} is {d!r}, not a '
                                 'number >= 0 or a symbol')
    return arr


def _options(skip, fold_max_bytes, fold_qdq, verify, input_shapes=None, outputs=None,
             inputs=None, drop_unused_outputs=False, shapes=True, inline_functions=True,
             overwrite_fixed_dims=False):
    """The options struct and the ctypes arrays it points at (keep them while it is used)."""
    names = [s.encode() for s in skip] + [None]
    arr = (ctypes.c_char_p * len(names))(*names)
    o = SimplifyOptions(fold_max_bytes=fold_max_bytes or 0, verify=int(verify),
                        fold_qdq=int(fold_qdq), drop_unused_outputs=int(drop_unused_outputs),
                        no_value_info=int(not shapes), all_value_info=int(shapes == 'all'),
                        keep_functions=int(not inline_functions),
                        overwrite_fixed_dims=int(bool(overwrite_fixed_dims)))
    o.skip = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))
    keep = [arr, _shapes(input_shapes), _names(outputs, 'outputs'), _names(inputs, 'inputs')]
    if keep[1] is not None:
        o.input_shapes, o.n_input_shapes = keep[1], len(keep[1])
    if keep[2] is not None:
        o.outputs = ctypes.cast(keep[2], ctypes.POINTER(ctypes.c_char_p))
    if keep[3] is not None:
        o.inputs = ctypes.cast(keep[3], ctypes.POINTER(ctypes.c_char_p))
    return o, keep


_STATES = {0: 'ok', 1: 'over', 2: 'shape', 3: 'missing', 4: 'skipped'}


class Difference:
    """How one value compares between two models (om_diff, include/omopt.h): .name; .state
    ('ok', 'over' the tolerance, 'shape' (types or shapes differ), 'missing', 'skipped');
    .shape (the first model's; a dim that differs over a check's runs is (smallest, largest))
    and .dtype; .max_abs = max|a - b|, .ref_max = max|a|,
    .max_rel = max_abs / ref_max (a: the first model's value); .node / .op: its producer in
    the second model, .ref_node / .ref_op: in the first ("" for none)."""

    def __init__(self, d):
        self.name = d.name.decode(errors='replace')
        self.state = _STATES.get(d.state, 'skipped')
        self.dtype = _NAMES.get(d.dtype, 'undefined')
        self.shape = None if d.rank < 0 else [
            d.dims[k] if d.dims[k] == d.dims_max[k] else (d.dims[k], d.dims_max[k])
            for k in range(d.rank)]
        self.max_abs, self.max_rel, self.ref_max = d.max_abs, d.max_rel, d.ref_max
        self.node, self.op = d.node.decode(errors='replace'), d.op.decode(errors='replace')
        self.ref_node = d.ref_node.decode(errors='replace')
        self.ref_op = d.ref_op.decode(errors='replace')

    def __repr__(self):
        return (f'Difference({self.name!r}, {self.state}, max_abs={self.max_abs:.3g}, '
                f'max_rel={self.max_rel:.3g})')


def _check_options(runs, inputs, rtol, atol, seed, keep):
    """CheckOptions with the given inputs as borrowed tensors (kept alive in keep)."""
    items = list((inputs or {}).items())
    names = (ctypes.c_char_p * max(len(items), 1))(*[k.encode() for k, _ in items])
    tensors = (Tensor * max(len(items), 1))()
    for i, (k, v) in enumerate(items):
        InferenceSession._tensor(tensors[i], v, k, keep)
    keep += [names, tensors]
    o = CheckOptions(runs=runs, seed=seed or 0, rtol=rtol or 0, atol=atol or 0,
                     ninputs=len(items))
    o.input_names = ctypes.cast(names, ctypes.POINTER(ctypes.c_char_p))
    o.inputs = ctypes.cast(tensors, ctypes.POINTER(Tensor))
    return o


def simplify(model, *, skip=(), fold_max_bytes=None, fold_qdq=False, verify=False,
             input_shapes=None, outputs=None, inputs=None, drop_unused_outputs=False,
             shapes=True, inline_functions=True, output=None, check=0, check_inputs=None,
             rtol=None, atol=None, seed=None, test_break_pass=None, dtype=None,
             keep_fp32=(), dtype_report=None, dtype_measure=True, external_data=False,
             opset=None, overwrite_fixed_dims=False):
    """Simplifies an ONNX model (docs/passes.md), as `omopt simplify` does.

    model: an onnx.ModelProto (returns one), bytes (returns bytes) or a path (returns the
        bytes of the simplified model, or writes them to `output` and returns that path).
    output: a path: the model is saved there by om_model_save, as `omopt simplify` does
        (a temporary file renamed over it, never a file the model reads). external_data:
        with output, weights of 1 KiB and more go to a file beside it named by its content,
        OUT.<16 hex>.data (--external-data).
    skip: pass names to leave out. fold_max_bytes: None keeps the rule that folding never
        makes the model larger; N folds any node whose outputs are at most N bytes each.
    fold_qdq: fold QuantizeLinear/DequantizeLinear on constants (a float model).
    verify: check the IR after every pass.
    input_shapes: {input name: [dims]} given to graph inputs first (--input-shape); a dim is
        a number or a symbol: {'x': [1, 3, 224, 224]}, {'x': ['N', 3, 224, 224]}.
        A dim the model declares as a number keeps it (InvalidInput) unless
        overwrite_fixed_dims=True (onnxsim's overwrite_input_shapes, `omopt simplify
        --input-shape`): then it changes, and the shapes inside are inferred again.
    outputs, inputs: tensor names; the sub-model between them (--outputs, --inputs).
    drop_unused_outputs: optional node outputs nothing reads become "".
    shapes: write the inferred shapes to value_info (True, and 'all' for older scripts);
        False: none (--no-shapes).
    inline_functions: inline model-local functions (False: --no-inline-functions).
    The result's weights and nodes are never larger than those of the model asked for
    (inlined, shaped, cut; value_info measured apart, see shapes) unless fold_max_bytes or fold_qdq allow it:
    otherwise that model is returned without the rewrites.
    check: N > 0 runs the model asked for (inlined, shaped, cut) and the result with omopt's
        executor on N input sets, as `omopt simplify --check N` (om_check in include/omopt.h),
        and raises CheckFailed, before anything is written, when an output differs beyond the
        tolerance: max|a - b| > atol + rtol * max|a| (defaults 1e-5, 1e-4), a the original's.
        check_inputs: {name: numpy array} fed in every run (`--input NAME=FILE`); the rest
        are random (seed). test_break_pass: testing only (a pass name: after its first run a
        wrong rewrite is made on purpose, om_simplify_with_break in include/omopt_testing.h).
    dtype: 'fp16' or 'bf16' (--dtype): after the passes, float32 compute becomes float16
        (bfloat16) with the inputs and outputs still float32 (om_convert_dtype in
        include/omopt.h); the nodes kept float32 are chosen by running the model on
        check_inputs (the rest random, `check` input sets or 2) with tolerances rtol, atol
        (defaults 1e-2, 1e-12); raises CheckFailed when the half outputs stay over them.
        keep_fp32: node names kept float32 too. dtype_report: a list that receives one
        (node, op, reason, max_rel) tuple per node kept float32. dtype_measure=False
        (--no-keep-measure): convert what the types admit without running the model.
        'fp32' (--dtype fp32): a float16 or bfloat16 model's compute back in float32 (its
        inputs and outputs keep their types), then checked against the model as given
        unless dtype_measure=False (CheckFailed over rtol, atol).
    opset: N converts the result to default-domain opset N, up or down (--opset N,
        om_opset_convert in include/omopt.h); raises Unsupported naming the node when a node
        cannot be expressed at N.
    Raises InvalidModel, InvalidInput, Unsupported, IoError, NoMemory (OmoptError),
    CheckFailed."""
    if dtype not in (None, 'fp16', 'bf16', 'float16', 'bfloat16', 'fp32', 'float32'):
        raise ValueError(f'dtype {dtype!r}: fp16, bf16 or fp32')
    if external_data and output is None:
        raise ValueError('external_data=True needs an output path')
    m = _Model(model)
    opts, keep = _options(skip, fold_max_bytes, fold_qdq, verify, input_shapes, outputs,
                          inputs, drop_unused_outputs, shapes, inline_functions,
                          overwrite_fixed_dims)
    # as the CLI: first what the user asked for alone, measured; then the rewrites
    asked = SimplifyOptions.from_buffer_copy(opts)
    asked.no_passes, asked.no_value_info = 1, 1
    rewrites = SimplifyOptions.from_buffer_copy(opts)
    rewrites.input_shapes, rewrites.n_input_shapes = None, 0
    rewrites.inputs = rewrites.outputs = None
    size_rule = fold_max_bytes is None and not fold_qdq
    st = Status()
    _lib.check(lib.om_simplify(m.ptr, ctypes.byref(asked), ctypes.byref(st)), st)
    size0 = m.saved_size() if size_rule else 0
    brk = test_break_pass.encode() if test_break_pass else None
    _lib.check(lib.om_simplify_with_break(m.ptr, ctypes.byref(rewrites), brk,
                                          ctypes.byref(st)), st)
    if size_rule and m.saved_size() > size0:
        m = _Model(model)  # as the CLI: the model asked for, without the rewrites
        asked.no_value_info = opts.no_value_info
        _lib.check(lib.om_simplify(m.ptr, ctypes.byref(asked), ctypes.byref(st)), st)
    if dtype:
        _convert_dtype(m, dtype, keep_fp32, check, check_inputs, rtol, atol, seed, dtype_report,
                       dtype_measure)
    if opset is not None:
        _lib.check(lib.om_opset_convert(m.ptr, ctypes.c_int64(int(opset)), ctypes.byref(st)), st)
    result = None
    if output is None or check:  # the model returned, or the one CheckFailed carries
        result = m.save_bytes()
        if m.kind == 'proto':
            import onnx
            result = onnx.load_from_string(result)
    if check:
        original = _Model(model)  # the model asked for, without the rewrites
        _lib.check(lib.om_simplify(original.ptr, ctypes.byref(asked), ctypes.byref(st)), st)
        if dtype and rtol is None:
            rtol = 1e-2  # half precision: the check's default tolerance, as the command's
        _check(original, m, check, check_inputs, rtol, atol, seed, result)
    del keep  # the arrays the options point at
    if output is not None:
        m.save(output, external_data)
        return output
    return result


_REASONS = {1: 'asked', 2: 'no half type at the opset', 3: 'runs subgraphs',
            4: 'quantize/dequantize', 5: 'unknown element type', 6: 'infers another type',
            7: 'overflow', 8: 'input beyond the half range', 9: 'over the node tolerance',
            10: 'omopt cannot run it in half', 11: 'kept so that the outputs pass',
            12: 'its weights in half move the outputs'}


def _convert_dtype(m, dtype, keep_fp32, runs, inputs, rtol, atol, seed, report, measure):
    keep = []
    names = (ctypes.c_char_p * (len(keep_fp32) + 1))(*[k.encode() for k in keep_fp32], None)
    o = DtypeOptions(dtype=16 if dtype.startswith('b') else 1 if '32' in dtype else 10,
                     check=_check_options(runs or 0, inputs, rtol, atol, seed, keep),
                     no_measure=0 if measure else 1)
    o.keep = ctypes.cast(names, ctypes.POINTER(ctypes.c_char_p)) if keep_fp32 else None
    rep, st = DtypeReport(), Status()
    try:
        _lib.check(lib.om_convert_dtype(m.ptr, ctypes.byref(o), ctypes.byref(rep),
                                        ctypes.byref(st)), st)
        if report is not None:
            for i in range(rep.nkept):
                k = rep.kept[i]
                report.append((k.node.decode(), k.op.decode(),
                               _REASONS.get(k.reason, str(k.reason)), k.max_rel))
        if rep.check.runs and not rep.check.passed:
            c = rep.check
            diffs = [Difference(c.outputs[i]) for i in range(c.noutputs)]
            ref = 'the model as given' if '32' in dtype else 'float32'
            raise CheckFailed(f'the {dtype} outputs differ from {ref} beyond rtol {c.rtol:g}, '
                              f'atol {c.atol:g}', diffs, c.failed_run,
                              c.how.decode(errors='replace'), c.error.decode(errors='replace'),
                              None)
    finally:
        lib.om_dtype_report_free(ctypes.byref(rep))
    del keep


def _check(original, simplified, runs, inputs, rtol, atol, seed, result):
    keep = []
    o = _check_options(runs, inputs, rtol, atol, seed, keep)
    rep, st = CheckReport(), Status()
    try:
        _lib.check(lib.om_check(original.ptr, simplified.ptr, ctypes.byref(o),
                                ctypes.byref(rep), ctypes.byref(st)), st)
        if rep.passed:
            return
        diffs = [Difference(rep.outputs[i]) for i in range(rep.noutputs)]
        error = rep.error.decode(errors='replace')
        worst = ', '.join(f'{d.name}: {d.state} (max abs {d.max_abs:.3g}, max rel '
                          f'{d.max_rel:.3g})' for d in diffs if d.state not in ('ok', 'skipped'))
        raise CheckFailed(f'the simplified model differs from the original in run '
                          f'{rep.failed_run + 1} of {rep.runs} (rtol {rep.rtol:g}, atol '
                          f'{rep.atol:g}): {worst}' + (f'; {error}' if error else ''),
                          diffs, rep.failed_run, rep.how.decode(errors='replace'), error,
                          result)
    finally:
        lib.om_check_report_free(ctypes.byref(rep))


def compare(a, b, *, inputs=None, rtol=None, atol=None, seed=None):
    """Runs models a and b (paths, bytes or onnx.ModelProto) once on the same inputs and
    compares every value they share by name, as `omopt compare` (om_compare). inputs:
    {name: numpy array}; the rest are random (seed). Returns a list of Difference in a's
    topological order; the first whose .state is not 'ok' or 'skipped' is the first value
    that differs. Raises OmoptError subclasses; InvalidModel when b fails to run."""
    ma, mb = _Model(a), _Model(b)
    keep = []
    o = _check_options(1, inputs, rtol, atol, seed, keep)
    rep, st = CompareReport(), Status()
    try:
        _lib.check(lib.om_compare(ma.ptr, mb.ptr, ctypes.byref(o), ctypes.byref(rep),
                                  ctypes.byref(st)), st)
        if rep.error:
            raise InvalidModel('InvalidModel', '', '', 'the second model failed to run: ' +
                             rep.error.decode(errors='replace'))
        return [Difference(rep.values[i]) for i in range(rep.n)]
    finally:
        lib.om_compare_report_free(ctypes.byref(rep))


class NodeArg:
    """An input or output of a session: .name, .shape (ints, dim_param strings, None where
    unknown; None when the rank is unknown) and .type ("tensor(float)", ...)."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.kind = info.kind
        self.elem = info.elem
        self.key = info.key
        elem = f"tensor({_NAMES.get(info.elem, 'undefined')})"
        if info.kind:
            # ONNX Runtime's names: map(int64,tensor(float)), seq(map(string,tensor(float)))
            inner = f"map({_NAMES.get(info.key, '?')},{elem})" if info.key else elem
            self.type = {SEQUENCE: f'seq({inner})', OPTIONAL: f'optional({inner})',
                         MAP: inner}.get(info.kind, 'other')
            self.shape = None
            return
        self.type = elem
        self.shape = None if info.rank < 0 else [
            info.dims[d] if info.dims[d] >= 0 else
            (info.dim_params[d].decode() if info.dim_params[d] else None)
            for d in range(info.rank)]

    def __repr__(self):
        return f'NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})'


class _MissingInputs(InvalidInput, ValueError):
    """Inputs not fed: a ValueError too, as ONNX Runtime's run raises."""


class _NodeFailed(InvalidInput, _lib.RuntimeException, _lib.Fail):
    """A node that fails on the values of a run (shapes that do not broadcast, a Reshape
    that does not fit): also ONNX Runtime's RuntimeException and Fail, the classes its run
    raises for "Non-zero status code returned while running NODE"."""


class InferenceSession:
    """Runs an ONNX model, with ONNX Runtime's API (docs/python.md: omopt.onnxruntime is this
    class with ONNX Runtime's defaults).

    path_or_bytes: a path, bytes or an onnx.ModelProto. sess_options: a SessionOptions
    (intra_op_num_threads, graph_optimization_level, enable_profiling, ...; see its doc).
    providers, provider_options: as ONNX Runtime's; omopt runs on the CPU
    ('CPUExecutionProvider'): another provider ONNX Runtime has warns and runs on the CPU, an
    unknown name is a ValueError. The keyword-only arguments are omopt's own (they win over
    sess_options): exact: only kernels whose results are
    bit-identical on every machine (others raise Unsupported). threads: threads kernels may
    use (None: 1). optimize: om_optimize first, as `omopt run` does (when it fails the model
    runs as loaded). max_memory: bytes a run may hold (None: the library's default, 8 GiB or
    half the memory; 0: no limit). max_run_ms: time limit of each run in milliseconds, past
    which run() raises InvalidInput (None: no limit). layout: fast mode's layout of the
    activations between convolutions, 'auto', 'blocked' (nChw16c), 'nhwc' or 'nchw'
    (om_layout_choice).

    run() may be called from any number of threads at once, as ONNX Runtime's may: each run has
    its own buffers, and the GIL is released while the library runs (docs/session.md). close()
    (or leaving a `with` block) frees the session once the runs under way have returned; run()
    after it raises InvalidInput."""

    _LAYOUTS = ('auto', 'blocked', 'nhwc', 'nchw')

    # threads without sess_options or threads=: omopt's 1; omopt.onnxruntime's: every core
    _ORT_DEFAULTS = False

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 *, exact=False, threads=None, optimize=None, max_memory=None, max_run_ms=None,
                 layout='auto', **kwargs):
        self._sess = None  # set last: close() and __del__ see a half-made session as closed
        self._guard = threading.Lock()  # _closed and _active: runs under way
        self._closed, self._active = False, 0
        if isinstance(sess_options, bool):
            raise TypeError('InferenceSession: the second argument is sess_options (a '
                            'SessionOptions); exact is keyword-only: exact=True')
        if sess_options is not None and not isinstance(sess_options, _ort.SessionOptions):
            raise TypeError('sess_options must be an omopt SessionOptions, not '
                            + type(sess_options).__name__)
        extra = set(kwargs) - {'disabled_optimizers'}
        if extra:
            raise TypeError(f'InferenceSession got unexpected keyword arguments {sorted(extra)}')
        if kwargs.get('disabled_optimizers'):
            warnings.warn('omopt: disabled_optimizers names ONNX Runtime\'s optimizers; omopt '
                          'has none of them (use GraphOptimizationLevel.ORT_DISABLE_ALL to run '
                          'the model as loaded)', stacklevel=2)
        if layout not in self._LAYOUTS:
            raise ValueError('layout must be one of %s, not %r' % (self._LAYOUTS, layout))
        self._providers, self._provider_options = _ort.normalize_providers(providers,
                                                                           provider_options)
        so = sess_options if sess_options is not None else _ort.SessionOptions()
        so.check_config()
        self._sess_options = so
        if threads is None:
            threads = so.threads() if sess_options is not None or self._ORT_DEFAULTS else 1
        if optimize is None:
            optimize = so.graph_optimization_level != _ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        self._profile_prefix = so.profile_file_prefix if so.enable_profiling else None
        self._profile_start = time.monotonic_ns()
        self._model = self._load(path_or_bytes, so)
        self._meta, self._source = None, path_or_bytes  # get_modelmeta reads it when asked
        sess = ctypes.c_void_p()
        st = Status()
        oo = SimplifyOptions(exact=int(bool(exact)))
        if optimize and lib.om_optimize(self._model.ptr, ctypes.byref(oo), ctypes.byref(st)):
            self._model = self._load(path_or_bytes, so)  # as loaded
        if so.optimized_model_filepath:
            self._model.save(so.optimized_model_filepath)
        o = _CSessionOptions(exact=int(exact), threads=threads or 1,
                             max_memory=ctypes.c_size_t(-1).value if max_memory == 0
                             else (max_memory or 0), max_run_ms=max_run_ms or 0,
                             layout=self._LAYOUTS.index(layout),
                             profile=2 if self._profile_prefix is not None else 0,
                             deterministic=int(bool(so.use_deterministic_compute)))
        check(lib.om_session_create(self._model.ptr, ctypes.byref(o), ctypes.byref(sess),
                                    ctypes.byref(st)), st)
        self._sess = sess
        self._inputs = self._infos(lib.om_session_input_count, lib.om_session_input_info)
        self._overridable = self._infos(lib.om_session_overridable_count,
                                        lib.om_session_input_info, len(self._inputs))
        self._outputs = self._infos(lib.om_session_output_count, lib.om_session_output_info)

    @staticmethod
    def _load(path_or_bytes, so):
        """The model, with the options' free dimension overrides applied to its inputs (the
        input shapes alone, no rewrite: om_simplify with no_passes)."""
        m = _Model(path_or_bytes)
        if not so._free_dims:
            return m
        from ._modelinfo import ModelInfo
        shapes = so.free_dimension_shapes(ModelInfo(m).inputs)
        if shapes:
            o, keep = _options((), None, False, False, shapes)
            o.no_passes, o.no_value_info = 1, 1
            st = Status()
            check(lib.om_simplify(m.ptr, ctypes.byref(o), ctypes.byref(st)), st)
            del keep
        return m

    def get_overridable_initializers(self):
        """As ONNX Runtime's: the graph inputs that have an initializer in a model of IR
        version 4 or later, as NodeArg. run() may feed them (checked like any input); one not
        fed takes its initializer's value. Before IR 4 (every initializer listed as an input)
        there are none: such inputs are constants, and feeding one is InvalidInput."""
        return list(self._overridable)

    def get_modelmeta(self):
        """ModelMetadata: producer_name, graph_name, graph_description, domain, description,
        version, custom_metadata_map."""
        if self._meta is None:
            src = self._source
            if isinstance(src, (str, os.PathLike)):
                with open(src, 'rb') as fh:
                    src = fh.read()
            elif hasattr(src, 'SerializeToString'):
                src = src.SerializeToString()
            self._meta = _ort.model_metadata(src)
        return self._meta

    def get_providers(self):
        """['CPUExecutionProvider']: omopt runs on the CPU."""
        return list(self._providers)

    def get_provider_options(self):
        return {p: dict(o) for p, o in zip(self._providers, self._provider_options)}

    def set_providers(self, providers=None, provider_options=None):
        """As ONNX Runtime's (validated the same way); the session stays on the CPU."""
        self._providers, self._provider_options = _ort.normalize_providers(providers,
                                                                           provider_options)

    def get_session_options(self):
        """The SessionOptions the session was made with (a default one when none was given)."""
        return self._sess_options

    def disable_fallback(self):
        """ONNX Runtime's fallback between providers: omopt has one provider (a no-op)."""

    def enable_fallback(self):
        """ONNX Runtime's fallback between providers: omopt has one provider (a no-op)."""

    def get_profiling_start_time_ns(self):
        return self._profile_start

    def end_profiling(self):
        """With SessionOptions.enable_profiling: writes the per-node profile of the runs so far
        as a Chrome trace JSON file named PREFIX_DATE_TIME.json (profile_file_prefix) and
        returns its name; profiling stops. Without it: returns "" (as ONNX Runtime)."""
        if self._profile_prefix is None or not self._sess:
            return ''
        rows_p, n, st = ctypes.POINTER(ProfileRow)(), ctypes.c_int(), Status()
        check(lib.om_session_profile(self._sess, ctypes.byref(rows_p), ctypes.byref(n),
                                     ctypes.byref(st)), st)
        try:
            rows = [(r.op.decode(), (r.node or b'').decode(errors='replace'), r.calls, r.ms,
                     (r.impl or b'').decode()) for r in (rows_p[i] for i in range(n.value))]
        finally:
            lib.om_free(ctypes.cast(rows_p, ctypes.c_void_p))
        prefix, self._profile_prefix = self._profile_prefix, None
        return _ort.write_profile(prefix, rows, self._profile_start)

    def io_binding(self):
        """An IOBinding (CPU arrays) for run_with_iobinding."""
        return _ort.IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        iobinding._run(run_options)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """run() on OrtValue inputs, returning OrtValue outputs."""
        feeds = {k: v.numpy() for k, v in input_dict_ort_values.items()}
        return [_ort.OrtValue(a) for a in self.run(output_names, feeds, run_options)]

    def _infos(self, count, info, first=0):
        out = []
        for i in range(first, first + count(self._sess)):
            st, io = Status(), IoInfo()
            check(info(self._sess, i, ctypes.byref(io), ctypes.byref(st)), st)
            out.append(NodeArg(io))
        return out

    def get_inputs(self):
        """The inputs to feed (initializers excluded: get_overridable_initializers), in
        order, as NodeArg."""
        return list(self._inputs)

    def get_outputs(self):
        """The outputs, in order, as NodeArg."""
        return list(self._outputs)

    def run(self, output_names, input_feed, run_options=None):
        """Runs once. input_feed: {name: value} for every input: a numpy array for a tensor
        (C-contiguous arrays are passed without a copy), a list of arrays for a sequence,
        None or a value for an optional. output_names: names to return, or None for all.
        Returns a list of numpy arrays (lists for sequences, None for an empty optional).
        Raises InvalidInput for a missing, unknown or mistyped input or one of the wrong shape
        (naming the node). String tensors are numpy arrays of str (or bytes, or objects that
        are str or bytes) in, object arrays of str out. run_options: a RunOptions
        (terminate=True raises Fail). Inputs not fed raise a ValueError (also InvalidInput),
        as ONNX Runtime's run; other errors subclass ONNX Runtime's (InvalidArgument, ...)."""
        if run_options is not None:
            run_options.check()
        guard = getattr(self, '_guard', None)
        if guard is None or not getattr(self, '_sess', None) and not self._closed:
            raise InvalidInput('InvalidInput', '', '', 'the session was never made')
        with guard:
            if self._closed:
                raise InvalidInput('InvalidInput', '', '', 'the session is closed')
            self._active += 1
        try:
            return self._run(output_names, input_feed)
        finally:
            with self._guard:
                self._active -= 1
                if self._closed and not self._active:
                    self._free()

    def _run(self, output_names, input_feed):
        names = [a.name for a in self._inputs]
        every = self._inputs + self._overridable  # the session's input order (omopt.h)
        unknown = set(input_feed) - {a.name for a in every}
        missing = [n for n in names if n not in input_feed]
        if missing:
            raise _MissingInputs('InvalidInput', '', '', f'inputs not in the model: '
                                 f'{sorted(unknown)}; inputs not fed: {missing}')
        if unknown:
            raise InvalidInput('InvalidInput', '', '', f'inputs not in the model: '
                               f'{sorted(unknown)}; inputs not fed: {missing}')
        # an overridable initializer not fed stays a zeroed Tensor: its initializer's value
        keep, boxes, tensors = [], [], (Tensor * max(len(every), 1))()
        try:
            for i, a in enumerate(every):
                if a.name in input_feed:
                    self._fill(tensors[i], a.kind, input_feed[a.name], a.name, keep, boxes,
                               a.elem, a.key)
            nout = len(self._outputs)
            outs, st = (Tensor * max(nout, 1))(), Status()
            kind = lib.om_session_run_values(self._sess, tensors, len(every), outs, nout,
                                             ctypes.byref(st))
        finally:
            for b in boxes:
                lib.om_value_free(ctypes.byref(b))
        try:
            try:
                check(kind, st)
            except InvalidInput as e:
                if not (e.node or e.op):
                    raise
                raise _NodeFailed(e.kind, e.node, e.op, e.message) from None
            result = [self._adopt(outs[i]) for i in range(nout)]
        finally:
            for i in range(nout):
                lib.om_value_free(ctypes.byref(outs[i]))
        if not output_names:  # None or [] (as ONNX Runtime): every output
            return result
        where = {a.name: i for i, a in enumerate(self._outputs)}
        bad = [n for n in output_names if n not in where]
        if bad:
            raise InvalidInput('InvalidInput', '', '', f'outputs not in the model: {bad}')
        return [result[where[n]] for n in output_names]

    @staticmethod
    def _tensor(t, value, name, keep):
        """t = a borrowed view of value as a tensor (kept alive in keep): numeric arrays as they
        are, arrays of str/bytes/object (str or bytes items) as string tensors (UTF-8)."""
        a = np.asarray(value)  # (np.ascontiguousarray makes a scalar 1-d)
        if a.ndim > 8:
            raise Unsupported('Unsupported', '', '', f'input {name!r}: rank {a.ndim} (at most 8)')
        if a.dtype.kind in 'USO':
            return InferenceSession._strings(t, a, name, keep)
        if not a.flags['C_CONTIGUOUS']:
            a = a.copy(order='C')
        if a.dtype not in _ONNX:
            raise Unsupported('Unsupported', '', '', f'input {name!r}: numpy {a.dtype} '
                              '(numeric, bool or string tensors only)')
        keep.append(a)
        t.dtype, t.rank, t.nbytes = _ONNX[a.dtype], a.ndim, a.nbytes
        for d, e in enumerate(a.shape):
            t.dims[d] = e
        t.data = a.ctypes.data

    @staticmethod
    def _strings(t, a, name, keep):
        """t = a string tensor over a's items (om_str pointing into bytes kept alive)."""
        items = []
        for x in a.reshape(-1).tolist():
            if isinstance(x, str):
                x = x.encode('utf-8')
            if not isinstance(x, bytes):
                raise InvalidInput('InvalidInput', '', '', f'input {name!r}: a string tensor '
                                   f'holds {type(x).__name__}, not str or bytes')
            items.append(x)
        arr = (Str * max(len(items), 1))()
        for k, x in enumerate(items):
            arr[k].ptr = ctypes.cast(ctypes.c_char_p(x), ctypes.c_void_p)
            arr[k].len = len(x)
        keep.append((items, arr))
        t.dtype, t.rank, t.nbytes = STRING, a.ndim, ctypes.sizeof(Str) * len(items)
        for d, e in enumerate(a.shape):
            t.dims[d] = e
        t.data = ctypes.cast(arr, ctypes.c_void_p)

    def _fill(self, t, kind, value, name, keep, boxes, elem=0, key=0):
        """t = the input value: a tensor, or a sequence/optional/map box the run borrows (its
        items copied in by om_box_insert; freed after the run). A dict is a map: its keys all
        str (or bytes) or all int, its values numbers (of the declared element type `elem`
        when known) or strings, or arrays (then a sequence of them)."""
        if kind == 0 or kind == -1:
            return self._tensor(t, value, name, keep)
        if kind == MAP:
            return self._map(t, value, name, keep, boxes, elem, key)
        st = Status()
        box = Tensor()
        check(lib.om_box_new(kind, 0, ctypes.byref(box), ctypes.byref(st)), st)
        boxes.append(box)
        if kind == OPTIONAL:
            items = [] if value is None else [value]
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise InvalidInput('InvalidInput', '', '', f'input {name!r} is a sequence: '
                               'give a list of arrays')
        seq = ctypes.cast(box.data, ctypes.POINTER(Seq))
        for k, item in enumerate(items):
            it = Tensor()
            if kind == OPTIONAL and isinstance(item, (list, tuple)):
                self._fill(it, SEQUENCE, item, name, keep, boxes, elem, key)
            elif isinstance(item, dict):
                self._map(it, item, name, keep, boxes, elem, key)
            else:
                self._tensor(it, item, name, keep)
            check(lib.om_box_insert(seq, k, ctypes.byref(it), ctypes.byref(st)), st)
        t.dtype, t.rank, t.nbytes, t.data = box.dtype, 0, 0, box.data

    def _map(self, t, value, name, keep, boxes, elem, key=0):
        """t = a map box over the dict value (keys, then values: omopt.h); key: the declared
        key type (0: by the keys)."""
        if not isinstance(value, dict):
            raise InvalidInput('InvalidInput', '', '', f'input {name!r} is a map: give a dict')
        keys = [k.encode('utf-8') if isinstance(k, str) else k for k in value]
        if key == 7 and not keys:
            ktype, karr = 7, np.array(keys, dtype=np.int64)
        elif all(isinstance(k, bytes) for k in keys):
            ktype, karr = STRING, np.array(keys, dtype=object)
        elif all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in keys):
            ktype, karr = 7, np.array(keys, dtype=np.int64)
        else:
            raise InvalidInput('InvalidInput', '', '', f'input {name!r}: a map\'s keys are all '
                               'str or all int')
        vals = list(value.values())
        st = Status()
        box = Tensor()
        check(lib.om_box_new(MAP, ktype, ctypes.byref(box), ctypes.byref(st)), st)
        boxes.append(box)
        seq = ctypes.cast(box.data, ctypes.POINTER(Seq))
        kt, vt = Tensor(), Tensor()
        self._tensor(kt, karr.reshape(len(keys)), name, keep)
        check(lib.om_box_insert(seq, 0, ctypes.byref(kt), ctypes.byref(st)), st)
        if all(np.ndim(v) == 0 for v in vals):
            want = _NP.get(elem) if elem != STRING else object
            arr = np.array(vals, dtype=want).reshape(len(vals))
            if arr.dtype == np.float64 and elem == 0:
                arr = arr.astype(np.float32)  # a Python float is a float map value
            self._tensor(vt, arr, name, keep)
        else:
            self._fill(vt, SEQUENCE, [np.asarray(v) for v in vals], name, keep, boxes)
        check(lib.om_box_insert(seq, 1, ctypes.byref(vt), ctypes.byref(st)), st)
        t.dtype, t.rank, t.nbytes, t.data = box.dtype, 0, 0, box.data

    @classmethod
    def _adopt(cls, t):
        """A run's output: a numeric tensor as a numpy array over the library's own buffer
        (no copy: a prompt's logits are tens of MB), freed with om_tensor_free when the last
        array over it goes; t is left without data. Anything else as _from_value."""
        if t.dtype in (SEQUENCE, OPTIONAL, MAP, STRING) or t.dtype not in _NP or not t.data:
            return cls._from_value(t)
        shape = tuple(t.dims[:t.rank])
        count = math.prod(shape)  # (np.prod: 10 us an output, a decoding step has nine)
        dtype = np.dtype(_NP[t.dtype])
        if count * dtype.itemsize > t.nbytes:
            return cls._from_value(t)
        own = Tensor()
        ctypes.memmove(ctypes.byref(own), ctypes.byref(t), ctypes.sizeof(Tensor))
        t.data, t.nbytes = None, 0
        buf = (ctypes.c_char * max(own.nbytes, 1)).from_address(own.data)
        weakref.finalize(buf, lib.om_tensor_free, ctypes.byref(own))
        return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)

    @classmethod
    def _from_value(cls, t):
        if t.dtype not in (SEQUENCE, OPTIONAL, MAP):
            return cls._to_numpy(t)
        seq = ctypes.cast(t.data, ctypes.POINTER(Seq)).contents
        items = [cls._from_value(seq.items[k]) for k in range(seq.n)]
        if t.dtype == MAP:  # a dict of Python keys and values, as ONNX Runtime gives
            keys, vals = items if len(items) == 2 else ([], [])
            vals = vals.tolist() if isinstance(vals, np.ndarray) else vals
            return dict(zip(keys.tolist() if isinstance(keys, np.ndarray) else keys, vals))
        if t.dtype == SEQUENCE:
            return items
        return items[0] if items else None

    @staticmethod
    def _to_numpy(t):
        shape = tuple(t.dims[d] for d in range(t.rank))
        if t.dtype == STRING:  # numpy object array of str, as ONNX Runtime gives
            n = int(np.prod(shape, dtype=np.int64))
            s = ctypes.cast(t.data, ctypes.POINTER(Str))
            out = np.empty(n, dtype=object)
            for k in range(n):
                out[k] = ctypes.string_at(s[k].ptr, s[k].len).decode('utf-8', 'replace')
            return out.reshape(shape)
        if t.dtype not in _NP:
            raise Unsupported('Unsupported', '', '',
                              f"an output of type {_NAMES.get(t.dtype, t.dtype)}")
        a = np.empty(shape, dtype=_NP[t.dtype])
        if a.nbytes:
            ctypes.memmove(a.ctypes.data, t.data, a.nbytes)
        return a

    def close(self):
        """Frees the session: now, or when the last run under way returns. Later runs raise
        InvalidInput; closing again does nothing."""
        guard = getattr(self, '_guard', None)
        if guard is None:  # __init__ failed before the session existed
            return
        with guard:
            self._closed = True
            if not self._active:
                self._free()

    def _free(self):
        """Frees the library's session (with _guard held, no run under way)."""
        if self._sess:
            lib.om_session_free(self._sess)
            self._sess = None

    def __copy__(self):
        raise TypeError('an InferenceSession cannot be copied: share the one session between '
                        'threads (run() may be called from many at once)')

    __deepcopy__ = __reduce__ = __reduce_ex__ = lambda self, *a: self.__copy__()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
