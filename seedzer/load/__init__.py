"""Loading ONNX models into TVM IR (Relax, then TIR PrimFunc seeds), with fidelity checks.

Importing this package does not import TVM: the TVM work happens in isolated worker processes.
"""

from seedzer.load.loader import LoadOptions, ModelLoad, OnnxLoader, load_all, pool_models

__all__ = ["LoadOptions", "ModelLoad", "OnnxLoader", "load_all", "pool_models"]
