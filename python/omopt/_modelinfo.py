"""_modelinfo.py — what the migration modules (omopt.onnxsim, omopt.onnxslim) read of a model
through the library: its graph inputs and outputs, and its nodes per op type."""
import ctypes

from . import NodeArg, _Model
from ._lib import IoInfo, OpCount, Status, check, lib


class ModelInfo:
    """inputs (NodeArg, initializer inputs left out), outputs (NodeArg), op_counts
    {op: nodes, subgraphs included}, nodes (main graph), initializer_bytes."""

    def __init__(self, model):
        m = model if isinstance(model, _Model) else _Model(model)
        self.inputs, self.outputs = [], []
        for i in range(lib.om_model_input_count(m.ptr)):
            st, io = Status(), IoInfo()
            check(lib.om_model_input_info(m.ptr, i, ctypes.byref(io), ctypes.byref(st)), st)
            if not io.has_initializer:
                self.inputs.append(NodeArg(io))
        for i in range(lib.om_model_output_count(m.ptr)):
            st, io = Status(), IoInfo()
            check(lib.om_model_output_info(m.ptr, i, ctypes.byref(io), ctypes.byref(st)), st)
            self.outputs.append(NodeArg(io))
        rows, n, st = ctypes.POINTER(OpCount)(), ctypes.c_int(), Status()
        check(lib.om_model_op_counts(m.ptr, ctypes.byref(rows), ctypes.byref(n),
                                     ctypes.byref(st)), st)
        try:
            self.op_counts = {rows[i].op.decode(errors='replace'): rows[i].count
                              for i in range(n.value)}
        finally:
            lib.om_free(ctypes.cast(rows, ctypes.c_void_p))
        self.nodes = lib.om_model_node_count(m.ptr)
        count = ctypes.c_int64()
        self.initializer_bytes = lib.om_model_initializer_bytes(m.ptr, ctypes.byref(count))
        self.initializers = count.value
