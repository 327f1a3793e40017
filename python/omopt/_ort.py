"""_ort.py — ONNX Runtime's option, metadata and value classes for omopt.InferenceSession and
omopt.onnxruntime (docs/python.md, *ONNX Runtime's API*): each option is honoured, or a
documented no-op that cannot change results, or a clear error."""
import ctypes
import datetime
import enum
import json
import os
import warnings

import numpy as np

from ._lib import InvalidArgument, Fail

CPU = 'CPUExecutionProvider'
# execution providers ONNX Runtime has: asking for one of them warns and runs on the CPU, as
# ONNX Runtime does when a build lacks it; any other name is a ValueError
KNOWN_PROVIDERS = (
    'TensorrtExecutionProvider', 'CUDAExecutionProvider', 'MIGraphXExecutionProvider',
    'ROCMExecutionProvider', 'OpenVINOExecutionProvider', 'DnnlExecutionProvider',
    'TvmExecutionProvider', 'VitisAIExecutionProvider', 'QNNExecutionProvider',
    'NnapiExecutionProvider', 'VSINPUExecutionProvider', 'JsExecutionProvider',
    'CoreMLExecutionProvider', 'ArmNNExecutionProvider', 'ACLExecutionProvider',
    'DmlExecutionProvider', 'RknpuExecutionProvider', 'WebNNExecutionProvider',
    'WebGpuExecutionProvider', 'XnnpackExecutionProvider', 'CANNExecutionProvider',
    'AzureExecutionProvider', 'NvTensorRTRTXExecutionProvider', CPU)


class GraphOptimizationLevel(enum.IntEnum):
    """ORT_DISABLE_ALL runs the model as loaded; the others run it after om_optimize."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """omopt runs the nodes one after another in either mode (the same results)."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class OrtAllocatorType(enum.IntEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


def _cores():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class _Options:
    """Attributes fixed by _DEFAULTS: setting another name is an AttributeError (as on ONNX
    Runtime's pybind11 classes), so a misspelt option is never silently ignored."""
    _DEFAULTS = {}

    def __init__(self):
        for k, v in self._DEFAULTS.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, '_config', {})
        object.__setattr__(self, '_free_dims', {})

    def __setattr__(self, name, value):
        if name not in self._DEFAULTS:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f'{type(self).__name__}(' + ', '.join(
            f'{k}={getattr(self, k)!r}' for k in self._DEFAULTS) + ')'


# session config entries omopt reads; any other key warns once when a session is made
_SESSION_KEYS_NOOP = {
    'session.intra_op.allow_spinning', 'session.inter_op.allow_spinning',
    'session.use_env_allocators', 'session.set_denormal_as_zero',
    'session.disable_prepacking', 'session.dynamic_block_base',
    'session.use_device_allocator_for_initializers', 'session.force_spinning_stop',
    'session.intra_op_thread_affinities', 'session.disable_cpu_ep_fallback',
}


class SessionOptions(_Options):
    """ONNX Runtime's SessionOptions. Honoured: intra_op_num_threads (0: every core this process
    may use), graph_optimization_level (ORT_DISABLE_ALL: no om_optimize),
    enable_profiling and profile_file_prefix (end_profiling), optimized_model_filepath (the
    optimized model saved there, ONNX format), add_session_config_entry
    ('session.load_model_format': 'ONNX'; 'ORT' is refused). No-ops that cannot change
    results: inter_op_num_threads, execution_mode, log_* , logid, enable_cpu_mem_arena,
    enable_mem_pattern, enable_mem_reuse, the allow_spinning entries. use_deterministic_compute
    (default False, as ONNX Runtime's): True makes a run's results depend on its inputs and
    thread count alone; False lets a convolution whose thread pool is held by another
    process's work run its one-thread form (om_session_options.deterministic). Refused with an
    add_free_dimension_override_by_name (the named input dims fixed before the session is
    made). Refused with an error: register_custom_ops_library, add_initializer,
    add_external_initializers, add_free_dimension_override_by_denotation,
    session.load_model_format ORT."""
    _DEFAULTS = dict(
        intra_op_num_threads=0, inter_op_num_threads=0,
        graph_optimization_level=GraphOptimizationLevel.ORT_ENABLE_ALL,
        execution_mode=ExecutionMode.ORT_SEQUENTIAL, enable_profiling=False,
        profile_file_prefix='onnxruntime_profile_', optimized_model_filepath='',
        log_severity_level=2, log_verbosity_level=0, logid='', enable_cpu_mem_arena=True,
        enable_mem_pattern=True, enable_mem_reuse=True, use_deterministic_compute=False,
        execution_order=0)

    def add_session_config_entry(self, key, value):
        key, value = str(key), str(value)
        if key == 'session.load_model_format' and value.upper() not in ('ONNX', ''):
            raise InvalidArgument(f'omopt: session.load_model_format {value!r}: omopt reads '
                                  'ONNX models only (not the ORT format)')
        self._config[key] = value

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise RuntimeError(f'SessionOptions does not have configuration with key: {key}')
        return self._config[key]

    def _refuse(self, what):
        raise NotImplementedError(f'omopt: SessionOptions.{what} is not supported by '
                                  'omopt.onnxruntime')

    def register_custom_ops_library(self, path):
        self._refuse('register_custom_ops_library (custom op libraries of ONNX Runtime)')

    def add_initializer(self, name, value):
        self._refuse('add_initializer')

    def add_external_initializers(self, names, values):
        self._refuse('add_external_initializers')

    def add_free_dimension_override_by_name(self, name, value):
        """As ONNX Runtime's: every graph input dim named `name` (dim_param) becomes `value`
        in the sessions made with these options (get_inputs() shows it; feeding another
        extent is InvalidArgument)."""
        value = int(value)
        if value < 0:
            raise InvalidArgument(f'free dimension override {name!r}: {value} is negative')
        self._free_dims[str(name)] = value

    def free_dimension_shapes(self, inputs):
        """{input name: dims} giving the overridden dims of these NodeArgs (the others as
        they are), for omopt.simplify's input_shapes; {} without overrides."""
        shapes = {}
        for a in inputs:
            if a.shape and any(isinstance(d, str) and d in self._free_dims for d in a.shape):
                shapes[a.name] = [self._free_dims.get(d, d) if isinstance(d, str) else
                                  f'{a.name}_dim{i}' if d is None else d  # unknown: a symbol
                                  for i, d in enumerate(a.shape)]
        return shapes

    def add_free_dimension_override_by_denotation(self, name, value):
        self._refuse('add_free_dimension_override_by_denotation')

    def threads(self):
        """The threads a session made with these options uses."""
        n = int(self.intra_op_num_threads)
        if n < 0:
            raise InvalidArgument(f'intra_op_num_threads {n}: 0 or more')
        return n or _cores()

    def check_config(self):
        for k in self._config:
            if k != 'session.load_model_format' and k not in _SESSION_KEYS_NOOP:
                warnings.warn(f'omopt: session config entry {k!r} has no counterpart in omopt '
                              'and is not applied', stacklevel=4)


class RunOptions(_Options):
    """ONNX Runtime's RunOptions. terminate=True makes run() raise Fail (as ONNX Runtime's
    "Exiting due to terminate flag"); log_* , logid and only_execute_path_to_fetches are
    no-ops (omopt computes what the outputs need either way)."""
    _DEFAULTS = dict(log_severity_level=2, log_verbosity_level=0, logid='', terminate=False,
                     only_execute_path_to_fetches=False, synchronize_execution_providers=True)

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        if key not in self._config:
            raise RuntimeError(f'RunOptions does not have configuration with key: {key}')
        return self._config[key]

    def check(self):
        if self.terminate:
            raise Fail('Exiting due to terminate flag being set to true.')


def normalize_providers(providers, provider_options):
    """ONNX Runtime's check of providers/provider_options: (names, options) of the providers
    that run here (the CPU). An execution provider ONNX Runtime has but omopt has not warns, as
    ONNX Runtime does for one its build lacks; an unknown name is a ValueError."""
    if providers is None:
        return [CPU], [{}]
    if isinstance(providers, str) or not hasattr(providers, '__len__'):
        raise ValueError("'providers' should be a sequence.")
    if provider_options is not None:
        if isinstance(provider_options, (str, dict)) or not hasattr(provider_options, '__len__'):
            raise ValueError("'provider_options' should be a sequence.")
        if len(providers) != len(provider_options):
            raise ValueError("'providers' and 'provider_options' should be the same length if "
                             "both are given.")
        if not all(isinstance(p, str) for p in providers):
            raise ValueError("Only string values for 'providers' are supported if "
                             "'provider_options' is given.")
        if not all(isinstance(o, dict) for o in provider_options):
            raise ValueError("'provider_options' values must be dicts.")
        pairs = list(zip(providers, provider_options))
    else:
        pairs = []
        for p in providers:
            if isinstance(p, str):
                pairs.append((p, {}))
            elif (isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                  and isinstance(p[1], dict)):
                pairs.append(p)
            else:
                raise ValueError("'providers' values must be either strings or (string, dict) "
                                 "tuples.")
    options = None
    for name, opts in pairs:
        if name not in KNOWN_PROVIDERS:
            raise ValueError(f"Specified provider '{name}' is unavailable. Available "
                             f"providers: '{CPU}'")
        if name != CPU:
            warnings.warn(f"Specified provider '{name}' is not in available provider names."
                          f"Available providers: '{CPU}' (omopt runs on the CPU)",
                          stacklevel=4)
        elif options is None:
            options = {str(k): str(v) for k, v in opts.items()}
    return [CPU], [options or {}]


class ModelMetadata:
    """get_modelmeta(): producer_name, graph_name, graph_description, domain, description
    (the model's doc_string), version (model_version), custom_metadata_map (metadata_props)."""

    def __init__(self, fields):
        self.producer_name = fields.get(2, '')
        self.domain = fields.get(4, '')
        self.version = fields.get(5, 0)
        self.description = fields.get(6, '')
        self.graph_name = fields.get('graph_name', '')
        self.graph_description = fields.get('graph_description', '')
        self.custom_metadata_map = fields.get('meta', {})

    def __repr__(self):
        return (f'ModelMetadata(producer_name={self.producer_name!r}, graph_name='
                f'{self.graph_name!r}, domain={self.domain!r}, version={self.version}, '
                f'custom_metadata_map={self.custom_metadata_map!r})')


def _varint(b, i):
    n = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError('truncated varint')
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, i


def _fields(b):
    """(field number, wire type, value) of one protobuf message's top level; a length-delimited
    value is a memoryview slice (not copied)."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            if n > len(b) - i:
                raise ValueError('truncated field')
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f'wire type {wt}')
        yield num, wt, v


def _text(v):
    return bytes(v).decode('utf-8', 'replace')


def model_metadata(data):
    """ModelMetadata of serialized ModelProto bytes (a memoryview or bytes; only the top level
    and the graph's name and doc_string are read). Bytes that do not parse give the fields
    read so far (the library has loaded the model already)."""
    f = {}
    try:
        for num, wt, v in _fields(memoryview(data)):
            if wt == 2 and num in (2, 4, 6):
                f[num] = _text(v)
            elif wt == 0 and num == 5:
                f[5] = v
            elif wt == 2 and num == 7:
                for gn, gwt, gv in _fields(v):
                    if gwt == 2 and gn == 2:
                        f['graph_name'] = _text(gv)
                    elif gwt == 2 and gn == 10:
                        f['graph_description'] = _text(gv)
            elif wt == 2 and num == 14:
                kv = {n: _text(x) for n, w, x in _fields(v) if w == 2}
                f.setdefault('meta', {})[kv.get(1, '')] = kv.get(2, '')
    except ValueError:
        pass
    return ModelMetadata(f)


def write_profile(prefix, rows, start_ns):
    """end_profiling(): a Chrome trace (chrome://tracing, Perfetto) of the session's per-node
    profile, `PREFIX_YYYY-MM-DD_HH-MM-SS.json` as ONNX Runtime names it. omopt records each
    node's total time over the runs (not each run), so a node is one complete event ("X")
    whose dur is its total, laid one after another, with args op_name, calls, provider."""
    name = f'{prefix}_{datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")}.json'
    events, ts = [], 0
    for op, node, calls, ms, impl in rows:
        dur = int(round(ms * 1000))
        args = {'op_name': op, 'calls': calls, 'provider': CPU}
        if impl:
            args['impl'] = impl
        events.append({'cat': 'Node', 'pid': os.getpid(), 'tid': 0, 'dur': dur, 'ts': ts,
                       'ph': 'X', 'name': f'{node}_kernel_time', 'args': args})
        ts += dur
    with open(name, 'w') as fh:
        json.dump(events, fh, indent=0)
    return name


class OrtValue:
    """ONNX Runtime's OrtValue over a numpy array on the CPU: ortvalue_from_numpy, numpy(),
    shape(), data_type(), element_type(), device_name(), is_tensor(), has_value()."""

    def __init__(self, array):
        self._a = array

    @classmethod
    def ortvalue_from_numpy(cls, array, device_type='cpu', device_id=0):
        if str(device_type).lower() != 'cpu':
            raise InvalidArgument(f'omopt: device {device_type!r}: omopt runs on the CPU')
        return cls(np.asarray(array))

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape, element_type, device_type='cpu', device_id=0):
        return cls.ortvalue_from_numpy(np.zeros(shape, dtype=element_type), device_type)

    def numpy(self):
        return self._a

    def shape(self):
        return list(np.shape(self._a))

    def data_type(self):
        from . import _NAMES, _ONNX
        a = np.asarray(self._a)
        return f"tensor({_NAMES.get(_ONNX.get(a.dtype), 'string')})"

    def element_type(self):
        """The ONNX element type number (TensorProto.DataType: 1 float, 7 int64, 8 string),
        as ONNX Runtime's OrtValue.element_type() gives it."""
        from . import _ONNX
        dt = np.asarray(self._a).dtype
        return _ONNX.get(dt, 8 if dt.kind in 'OUS' else 0)

    def device_name(self):
        return 'cpu'

    def is_tensor(self):
        return isinstance(self._a, np.ndarray)

    def has_value(self):
        return self._a is not None

    def data_ptr(self):
        return self._a.ctypes.data


def _cpu_buffer(what, name, device_type, element_type, shape, buffer_ptr):
    """The array over CPU memory that ONNX Runtime's bind_input/bind_output name by
    (element_type, shape, buffer_ptr)."""
    if str(device_type).lower() != 'cpu':
        raise InvalidArgument(f'omopt: {what}({name!r}) on device {device_type!r}: omopt runs '
                              'on the CPU (bind a numpy array or an OrtValue)')
    if element_type is None or shape is None or not buffer_ptr:
        raise InvalidArgument(f'omopt: {what}({name!r}): a CPU buffer needs element_type, '
                              'shape and buffer_ptr')
    dt = np.dtype(element_type)
    if dt.kind in 'OUS':
        raise InvalidArgument(f'omopt: {what}({name!r}): a string tensor cannot be bound by '
                              'pointer')
    dims = tuple(int(d) for d in shape)
    if any(d < 0 for d in dims):
        raise InvalidArgument(f'omopt: {what}({name!r}): shape {list(dims)} has a negative dim')
    n = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
    raw = (ctypes.c_char * n).from_address(int(buffer_ptr)) if n else bytearray()
    return np.frombuffer(raw, dtype=dt).reshape(dims)


class IOBinding:
    """ONNX Runtime's IOBinding on the CPU: bind_cpu_input, bind_input (a numpy array or
    OrtValue, or 'cpu' with element_type, shape and buffer_ptr), bind_ortvalue_input,
    bind_output (a name; with buffer_ptr the output is written there), bind_ortvalue_output
    (written into that OrtValue), and after run_with_iobinding get_outputs() (OrtValue) and
    copy_outputs_to_cpu() (arrays)."""

    def __init__(self, session):
        self._session = session
        self._inputs, self._outputs, self._result, self._into = {}, [], None, {}

    def bind_cpu_input(self, name, arr_on_cpu):
        self._inputs[name] = arr_on_cpu

    def bind_input(self, name, device_type='cpu', device_id=0, element_type=None, shape=None,
                   buffer_ptr=None):
        """bind_input(name, array) or ONNX Runtime's bind_input(name, 'cpu', 0, element_type,
        shape, buffer_ptr): the CPU memory at buffer_ptr read as an array of that type and
        shape (not copied: it must stay alive until the run). Another device is refused."""
        if isinstance(device_type, (np.ndarray, OrtValue)):  # bind_input(name, array)
            device_type = device_type.numpy() if isinstance(device_type, OrtValue) else device_type
            self._inputs[name] = device_type
            return
        self._inputs[name] = _cpu_buffer('bind_input', name, device_type, element_type, shape,
                                         buffer_ptr)

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue.numpy()

    def bind_output(self, name, device_type='cpu', device_id=0, element_type=None, shape=None,
                    buffer_ptr=None):
        """A CPU output by name; with element_type, shape and buffer_ptr, the run writes the
        output into that memory (its type and shape must be the output's: InvalidArgument)."""
        if str(device_type).lower() != 'cpu':
            raise InvalidArgument(f'omopt: bind_output device {device_type!r}: omopt runs on '
                                  'the CPU')
        into = None
        if buffer_ptr is not None:
            into = _cpu_buffer('bind_output', name, device_type, element_type, shape,
                               buffer_ptr)
        self._bind_out(name, into)

    def bind_ortvalue_output(self, name, ortvalue):
        """The run writes the output into the OrtValue's array (same type and shape)."""
        self._bind_out(name, ortvalue.numpy())

    def _bind_out(self, name, into):
        if name not in self._outputs:
            self._outputs.append(name)
        self._into[name] = into

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._outputs, self._into = [], {}

    def synchronize_inputs(self):
        pass

    def synchronize_outputs(self):
        pass

    def _run(self, run_options):
        names = self._outputs or None
        result = self._session.run(names, self._inputs, run_options)
        for i, name in enumerate(self._outputs):
            into = self._into.get(name)
            if into is None:
                continue
            a = result[i]
            if a.dtype != into.dtype or a.shape != into.shape:
                raise InvalidArgument(f'omopt: output {name!r} is {a.dtype} {list(a.shape)}, '
                                      f'the bound buffer {into.dtype} {list(into.shape)}')
            np.copyto(into, a)
            result[i] = into
        self._result = result

    def get_outputs(self):
        return [OrtValue(a) for a in self._result or []]

    def copy_outputs_to_cpu(self):
        return list(self._result or [])
