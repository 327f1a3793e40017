"""ONNX Runtime's exception classes (each, as ONNX Runtime registers it, an Exception). omopt's
errors subclass them: InvalidInput is an InvalidArgument, IoError a NoSuchFile (and an OSError),
InvalidModel an InvalidGraph, InvalidProtobuf and Fail, Unsupported a NotImplemented (and an
InvalidGraph), NoMemory
and Internal RuntimeExceptions."""
from ..._lib import (EngineError, EPFail, Fail, InvalidArgument, InvalidGraph,  # noqa: F401
                     InvalidProtobuf, ModelLoaded, NoModel, NoSuchFile, NotImplemented,
                     RuntimeException)
from ..._ort import (ExecutionMode, GraphOptimizationLevel, ModelMetadata,  # noqa: F401
                     OrtValue, RunOptions, SessionOptions)
