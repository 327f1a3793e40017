"""omopt.onnxruntime: ONNX Runtime's Python API over omopt, so that code written for
`onnxruntime` runs after changing only its import line:

    import omopt.onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession('model.onnx', so, providers=['CPUExecutionProvider'])
    [y] = sess.run(None, {sess.get_inputs()[0].name: x})

InferenceSession is omopt.InferenceSession with ONNX Runtime's default threads (every core
this process may use, as intra_op_num_threads=0). What each option does, and where omopt
departs from ONNX Runtime: docs/python.md, *ONNX Runtime's API*. Errors are the classes of
onnxruntime.capi.onnxruntime_pybind11_state (Fail, InvalidArgument, NoSuchFile,
InvalidProtobuf, NotImplemented, RuntimeException, ...), also importable from
omopt.onnxruntime.capi.onnxruntime_pybind11_state."""
from .. import InferenceSession as _Session, NodeArg, __version__
from .._ort import (CPU as _CPU, ExecutionMode, GraphOptimizationLevel, IOBinding,
                    ModelMetadata, OrtAllocatorType, OrtValue, RunOptions, SessionOptions)
from . import capi

__all__ = ['InferenceSession', 'SessionOptions', 'RunOptions', 'GraphOptimizationLevel',
           'ExecutionMode', 'OrtAllocatorType', 'NodeArg', 'ModelMetadata', 'OrtValue',
           'IOBinding', 'get_available_providers', 'get_all_providers', 'get_device',
           'get_build_info', 'get_version_string', 'enable_telemetry_events',
           'disable_telemetry_events', 'set_default_logger_severity', 'set_default_logger_verbosity',
           'set_seed', 'capi', '__version__']


class InferenceSession(_Session):
    __doc__ = _Session.__doc__
    _ORT_DEFAULTS = True


def get_available_providers():
    """['CPUExecutionProvider']."""
    return [_CPU]


def get_all_providers():
    from .._ort import KNOWN_PROVIDERS
    return list(KNOWN_PROVIDERS)


def get_device():
    """'CPU'."""
    return 'CPU'


def get_build_info():
    return f'omopt {__version__} (omopt.onnxruntime: ONNX Runtime\'s API over omopt)'


def get_version_string():
    """omopt's version (not an ONNX Runtime version), as __version__."""
    return __version__


def enable_telemetry_events():
    """Accepted; a no-op (omopt sends nothing anywhere)."""


def disable_telemetry_events():
    """Accepted; a no-op (omopt sends nothing anywhere)."""


def set_default_logger_severity(level):
    """Accepted (0-4); omopt logs nothing, so no level changes what is printed or computed."""
    if int(level) not in range(5):
        raise ValueError(f'logger severity {level}: 0 to 4')


def set_default_logger_verbosity(level):
    """Accepted; a no-op (omopt logs nothing)."""


def set_seed(seed):
    """Accepted; a no-op (omopt's kernels take no random numbers: RandomNormal and the like
    take their seed attribute)."""
