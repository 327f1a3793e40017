"""omopt.onnxruntime.capi: onnxruntime.capi's error classes (onnxruntime_pybind11_state), also
importable by ONNX Runtime's other name for that module, capi._pybind_state."""
import sys

from . import onnxruntime_pybind11_state
from . import onnxruntime_pybind11_state as _pybind_state  # noqa: F401 (ONNX Runtime's alias)

# `from onnxruntime.capi._pybind_state import Fail` in scripts: the same module by that name
sys.modules.setdefault(__name__ + '._pybind_state', onnxruntime_pybind11_state)
