"""omopt.onnxruntime.capi: onnxruntime.capi's error classes (onnxruntime_pybind11_state)."""
from . import onnxruntime_pybind11_state
from . import onnxruntime_pybind11_state as _pybind_state  # noqa: F401 (ONNX Runtime's alias)
