"""_lib.py — ctypes bindings of include/omopt.h: the structs, the functions, and errors as
exceptions. Only the omopt package uses it."""
import ctypes
import ctypes.util
import os

MAX_RANK = 8


class Status(ctypes.Structure):
    _fields_ = [('kind', ctypes.c_int), ('node', ctypes.c_char * 128),
                ('op', ctypes.c_char * 64), ('msg', ctypes.c_char * 512)]


class Tensor(ctypes.Structure):
    _fields_ = [('dtype', ctypes.c_int32), ('rank', ctypes.c_int32),
                ('dims', ctypes.c_int64 * MAX_RANK), ('data', ctypes.c_void_p),
                ('nbytes', ctypes.c_size_t)]


class InputShape(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char_p), ('rank', ctypes.c_int32),
                ('dims', ctypes.c_int64 * MAX_RANK), ('dim_params', ctypes.c_char_p * MAX_RANK)]


class SimplifyOptions(ctypes.Structure):
    _fields_ = [('fold_max_bytes', ctypes.c_size_t), ('skip', ctypes.POINTER(ctypes.c_char_p)),
                ('verify', ctypes.c_int), ('verbose', ctypes.c_int), ('fold_qdq', ctypes.c_int),
                ('input_shapes', ctypes.POINTER(InputShape)), ('n_input_shapes', ctypes.c_int32),
                ('outputs', ctypes.POINTER(ctypes.c_char_p)),
                ('inputs', ctypes.POINTER(ctypes.c_char_p)),
                ('drop_unused_outputs', ctypes.c_int), ('no_value_info', ctypes.c_int),
                ('all_value_info', ctypes.c_int),
                ('keep_functions', ctypes.c_int), ('no_passes', ctypes.c_int),
                ('progress', ctypes.c_void_p), ('progress_user', ctypes.c_void_p),
                ('exact', ctypes.c_int), ('overwrite_fixed_dims', ctypes.c_int)]


class SaveOptions(ctypes.Structure):
    _fields_ = [('external_data', ctypes.c_int), ('external_min_bytes', ctypes.c_size_t),
                ('external_name', ctypes.c_char_p)]


class CheckOptions(ctypes.Structure):
    _fields_ = [('runs', ctypes.c_int), ('seed', ctypes.c_uint64), ('rtol', ctypes.c_double),
                ('atol', ctypes.c_double), ('input_names', ctypes.POINTER(ctypes.c_char_p)),
                ('inputs', ctypes.POINTER(Tensor)), ('ninputs', ctypes.c_int),
                ('threads', ctypes.c_int), ('progress', ctypes.c_void_p),
                ('progress_user', ctypes.c_void_p)]


class Diff(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char * 256), ('node', ctypes.c_char * 128),
                ('op', ctypes.c_char * 64), ('ref_node', ctypes.c_char * 128),
                ('ref_op', ctypes.c_char * 64), ('state', ctypes.c_int32),
                ('dtype', ctypes.c_int32), ('rank', ctypes.c_int32),
                ('dims', ctypes.c_int64 * MAX_RANK), ('max_abs', ctypes.c_double),
                ('max_rel', ctypes.c_double), ('ref_max', ctypes.c_double),
                ('dims_max', ctypes.c_int64 * MAX_RANK)]


class CheckReport(ctypes.Structure):
    _fields_ = [('runs', ctypes.c_int), ('passed', ctypes.c_int), ('failed_run', ctypes.c_int),
                ('rtol', ctypes.c_double), ('atol', ctypes.c_double),
                ('how', ctypes.c_char * 1024), ('error', ctypes.c_char * 700),
                ('noutputs', ctypes.c_int), ('outputs', ctypes.POINTER(Diff)),
                ('nfailed_inputs', ctypes.c_int),
                ('failed_input_names', ctypes.POINTER(ctypes.c_char_p)),
                ('failed_inputs', ctypes.POINTER(Tensor))]


class DtypeOptions(ctypes.Structure):
    _fields_ = [('dtype', ctypes.c_int32), ('check', CheckOptions), ('node_rtol', ctypes.c_double),
                ('max_rounds', ctypes.c_int), ('keep', ctypes.POINTER(ctypes.c_char_p)),
                ('no_measure', ctypes.c_int)]


class DtypeKept(ctypes.Structure):
    _fields_ = [('node', ctypes.c_char * 128), ('op', ctypes.c_char * 64),
                ('reason', ctypes.c_int32), ('max_rel', ctypes.c_double),
                ('detail', ctypes.c_char * 256), ('weights_half', ctypes.c_int32)]


class DtypeReport(ctypes.Structure):
    _fields_ = [('converted', ctypes.c_int), ('nkept', ctypes.c_int),
                ('kept', ctypes.POINTER(DtypeKept)), ('rounds', ctypes.c_int),
                ('clamped', ctypes.c_int64), ('check', CheckReport), ('unchanged', ctypes.c_int)]


class CompareReport(ctypes.Structure):
    _fields_ = [('rtol', ctypes.c_double), ('atol', ctypes.c_double),
                ('how', ctypes.c_char * 1024), ('error', ctypes.c_char * 700),
                ('n', ctypes.c_int), ('values', ctypes.POINTER(Diff)),
                ('first_over', ctypes.c_int)]


class SessionOptions(ctypes.Structure):
    _fields_ = [('exact', ctypes.c_int), ('threads', ctypes.c_int), ('profile', ctypes.c_int),
                ('max_memory', ctypes.c_size_t), ('max_run_ms', ctypes.c_int64),
                ('layout', ctypes.c_int), ('keep_half', ctypes.c_int),
                ('deterministic', ctypes.c_int)]


class ProfileRow(ctypes.Structure):
    _fields_ = [('op', ctypes.c_char_p), ('calls', ctypes.c_int64), ('ms', ctypes.c_double),
                ('node', ctypes.c_char_p), ('impl', ctypes.c_char_p),
                ('plan_impl', ctypes.c_char_p)]


class OpCount(ctypes.Structure):
    _fields_ = [('op', ctypes.c_char * 128), ('count', ctypes.c_int64)]


class DotOptions(ctypes.Structure):
    _fields_ = [('plan', ctypes.c_int), ('diff', ctypes.c_void_p),
                ('session', ctypes.POINTER(SessionOptions))]


SEQUENCE, OPTIONAL, MAP = 0x10000, 0x10001, 0x10002
STRING = 8


class Str(ctypes.Structure):
    """om_str: one element of a string tensor (bytes, not NUL-terminated, and their count)."""
    _fields_ = [('ptr', ctypes.c_void_p), ('len', ctypes.c_int64)]


class Seq(ctypes.Structure):
    _fields_ = [('elem', ctypes.c_int32), ('n', ctypes.c_int64), ('cap', ctypes.c_int64),
                ('items', ctypes.POINTER(Tensor))]


class IoInfo(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char_p), ('kind', ctypes.c_int32), ('elem', ctypes.c_int32),
                ('rank', ctypes.c_int32), ('dims', ctypes.c_int64 * MAX_RANK),
                ('dim_params', ctypes.c_char_p * MAX_RANK), ('has_initializer', ctypes.c_int32),
                ('key', ctypes.c_int32)]


# onnxruntime.capi.onnxruntime_pybind11_state's exceptions (ONNX Runtime registers each with
# pybind11's default base, Exception); omopt's own errors below subclass the one ONNX Runtime
# raises for the same failure, so code written for either catches them (omopt.onnxruntime)
class Fail(Exception):
    """ONNX Runtime's FAIL."""


class InvalidArgument(Exception):
    """ONNX Runtime's INVALID_ARGUMENT: a wrong input name, type or shape."""


class NoSuchFile(Exception):
    """ONNX Runtime's NO_SUCHFILE."""


class NoModel(Exception):
    """ONNX Runtime's NO_MODEL."""


class EngineError(Exception):
    """ONNX Runtime's ENGINE_ERROR."""


class RuntimeException(Exception):
    """ONNX Runtime's RUNTIME_EXCEPTION."""


class InvalidProtobuf(Exception):
    """ONNX Runtime's INVALID_PROTOBUF: bytes that are not a model."""


class ModelLoaded(Exception):
    """ONNX Runtime's MODEL_LOADED."""


class NotImplemented(Exception):  # noqa: A001 (ONNX Runtime's name)
    """ONNX Runtime's NOT_IMPLEMENTED: an op or type without a kernel."""


class InvalidGraph(Exception):
    """ONNX Runtime's INVALID_GRAPH."""


class EPFail(Exception):
    """ONNX Runtime's EP_FAIL."""


class OmoptError(Exception):
    """A failure of the library: `kind` ("InvalidModel", "InvalidInput", "Unsupported", "Io",
    "NoMemory", "Internal"), the node's name and op type ("" when not about a node) and the
    message."""

    def __init__(self, kind, node, op, message):
        self.kind, self.node, self.op, self.message = kind, node, op, message
        where = f"node '{node}' ({op}): " if node or op else ''
        super().__init__(f'{kind}: {where}{message}')


class InvalidModel(OmoptError, InvalidGraph, InvalidProtobuf, Fail):
    """The model breaks a rule of ONNX (or of omopt's operator contract); also ONNX Runtime's
    InvalidGraph, InvalidProtobuf and Fail."""


class InvalidInput(OmoptError, InvalidArgument):
    """A run-time input is wrong: name, shape, type, an index out of range, over the memory
    limit."""


class Unsupported(OmoptError, NotImplemented, InvalidGraph):
    """Valid ONNX that omopt does not handle; also ONNX Runtime's NotImplemented (a node it has
    no kernel for) and InvalidGraph (what ONNX Runtime raises when a model's op has no schema,
    a custom domain's op: scripts catch either)."""


class IoError(OmoptError, NoSuchFile, OSError):
    """A file could not be read or written; also an OSError and ONNX Runtime's NoSuchFile."""


class NoMemory(OmoptError, RuntimeException, MemoryError):
    """An allocation failed."""


class Internal(OmoptError, RuntimeException):
    """A bug in omopt."""


class CheckFailed(OmoptError):
    """simplify(check=N): the simplified model's outputs differ from the original's beyond the
    tolerance, or it failed to run. `differences`: per output (omopt.Difference), the worst
    over the runs; `failed_run`: the first run that failed (from 0); `how`: how the inputs
    were made; `error`: the simplified model's failure, or ""; `model`: the simplified model,
    as simplify would have returned it."""

    def __init__(self, message, differences, failed_run, how, error, model):
        super().__init__('CheckFailed', '', '', message)
        self.differences, self.failed_run, self.how = differences, failed_run, how
        self.error, self.model = error, model


_KINDS = {1: InvalidModel, 2: InvalidInput, 3: Unsupported, 4: IoError, 5: NoMemory, 6: Internal}


def _load():
    """libomopt.so.0: $OMOPT_LIBRARY when set (a build tree), else the library inside the
    package (_libomopt*.so, a wheel's: pip install .), else the loader's search path, else
    the library folder omopt was installed to (_config.py, written by meson)."""
    explicit = os.environ.get('OMOPT_LIBRARY')
    if explicit:
        return ctypes.CDLL(explicit)
    import glob
    inside = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                           '_libomopt*.so')))
    if inside:
        return ctypes.CDLL(inside[0])
    try:
        return ctypes.CDLL('libomopt.so.0')
    except OSError:
        pass
    try:
        from . import _config
        return ctypes.CDLL(os.path.join(_config.LIBDIR, 'libomopt.so.0'))
    except (ImportError, OSError) as e:
        raise ImportError('omopt: libomopt.so.0 not found (pip install . or meson install '
                          'omopt, or set OMOPT_LIBRARY to its path)') from e


lib = _load()
_P = ctypes.POINTER
_sigs = {
    'om_version': ([], ctypes.c_char_p),
    'om_kind_name': ([ctypes.c_int], ctypes.c_char_p),
    'om_model_load': ([ctypes.c_char_p, _P(ctypes.c_void_p), _P(Status)], ctypes.c_int),
    'om_model_load_memory': ([ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                              _P(ctypes.c_void_p), _P(Status)], ctypes.c_int),
    'om_model_save': ([ctypes.c_void_p, ctypes.c_char_p, _P(SaveOptions), _P(Status)],
                      ctypes.c_int),
    'om_save_cleanup': ([], ctypes.c_int),
    'om_model_free': ([ctypes.c_void_p], None),
    'om_model_saved_size': ([ctypes.c_void_p, _P(ctypes.c_size_t), _P(Status)], ctypes.c_int),
    'om_model_saved_size_without_value_info': ([ctypes.c_void_p, _P(ctypes.c_size_t),
                                                _P(Status)], ctypes.c_int),
    'om_simplify': ([ctypes.c_void_p, _P(SimplifyOptions), _P(Status)], ctypes.c_int),
    'om_optimize': ([ctypes.c_void_p, _P(SimplifyOptions), _P(Status)], ctypes.c_int),
    'om_opset_convert': ([ctypes.c_void_p, ctypes.c_int64, _P(Status)], ctypes.c_int),
    # testing only (include/omopt_testing.h, not installed): simplify's test_break_pass
    'om_simplify_with_break': ([ctypes.c_void_p, _P(SimplifyOptions), ctypes.c_char_p,
                                _P(Status)], ctypes.c_int),
    'om_session_create': ([ctypes.c_void_p, _P(SessionOptions), _P(ctypes.c_void_p),
                           _P(Status)], ctypes.c_int),
    'om_session_input_count': ([ctypes.c_void_p], ctypes.c_int),
    'om_session_overridable_count': ([ctypes.c_void_p], ctypes.c_int),
    'om_session_output_count': ([ctypes.c_void_p], ctypes.c_int),
    'om_session_input_info': ([ctypes.c_void_p, ctypes.c_int, _P(IoInfo), _P(Status)],
                              ctypes.c_int),
    'om_session_output_info': ([ctypes.c_void_p, ctypes.c_int, _P(IoInfo), _P(Status)],
                               ctypes.c_int),
    'om_session_run': ([ctypes.c_void_p, _P(Tensor), ctypes.c_int, _P(Tensor), ctypes.c_int,
                        _P(Status)], ctypes.c_int),
    'om_session_run_values': ([ctypes.c_void_p, _P(Tensor), ctypes.c_int, _P(Tensor),
                               ctypes.c_int, _P(Status)], ctypes.c_int),
    'om_box_new': ([ctypes.c_int32, ctypes.c_int32, _P(Tensor), _P(Status)], ctypes.c_int),
    'om_box_insert': ([_P(Seq), ctypes.c_int64, _P(Tensor), _P(Status)], ctypes.c_int),
    'om_value_free': ([_P(Tensor)], None),
    'om_session_free': ([ctypes.c_void_p], None),
    'om_tensor_free': ([_P(Tensor)], None),
    'om_check': ([ctypes.c_void_p, ctypes.c_void_p, _P(CheckOptions), _P(CheckReport),
                  _P(Status)], ctypes.c_int),
    'om_check_report_free': ([_P(CheckReport)], None),
    'om_compare': ([ctypes.c_void_p, ctypes.c_void_p, _P(CheckOptions), _P(CompareReport),
                    _P(Status)], ctypes.c_int),
    'om_compare_report_free': ([_P(CompareReport)], None),
    'om_convert_dtype': ([ctypes.c_void_p, _P(DtypeOptions), _P(DtypeReport), _P(Status)],
                         ctypes.c_int),
    'om_dtype_report_free': ([_P(DtypeReport)], None),
    'om_session_profile': ([ctypes.c_void_p, _P(_P(ProfileRow)), _P(ctypes.c_int), _P(Status)],
                           ctypes.c_int),
    'om_free': ([ctypes.c_void_p], None),
    'om_model_input_count': ([ctypes.c_void_p], ctypes.c_int),
    'om_model_output_count': ([ctypes.c_void_p], ctypes.c_int),
    'om_model_output_info': ([ctypes.c_void_p, ctypes.c_int, _P(IoInfo), _P(Status)],
                             ctypes.c_int),
    'om_model_op_counts': ([ctypes.c_void_p, _P(_P(OpCount)), _P(ctypes.c_int), _P(Status)],
                           ctypes.c_int),
    'om_model_initializer_bytes': ([ctypes.c_void_p, _P(ctypes.c_int64)], ctypes.c_int64),
    'om_model_node_count': ([ctypes.c_void_p], ctypes.c_int64),
    'om_model_dot': ([ctypes.c_void_p, _P(DotOptions), _P(ctypes.c_void_p), _P(ctypes.c_size_t),
                      _P(Status)], ctypes.c_int),
    'om_model_ir_version': ([ctypes.c_void_p], ctypes.c_int64),
    'om_model_producer': ([ctypes.c_void_p, _P(ctypes.c_char_p)], ctypes.c_char_p),
    'om_model_opset_count': ([ctypes.c_void_p], ctypes.c_int),
    'om_model_opset_import': ([ctypes.c_void_p, ctypes.c_int, _P(ctypes.c_int64)],
                              ctypes.c_char_p),
    'om_model_input_info': ([ctypes.c_void_p, ctypes.c_int, _P(IoInfo), _P(Status)],
                            ctypes.c_int),
}
for _name, (_args, _res) in _sigs.items():
    _f = getattr(lib, _name)
    _f.argtypes, _f.restype = _args, _res


def check(kind, st):
    """Raises the exception of a failed call (kind != 0) from its status."""
    if kind:
        cls = _KINDS.get(kind, OmoptError)
        raise cls(lib.om_kind_name(kind).decode(), st.node.decode(errors='replace'),
                  st.op.decode(errors='replace'), st.msg.decode(errors='replace'))
