"""Loading ONNX models into TVM IR (Relax, then TIR PrimFunc seeds), with fidelity checks.

Importing this package does not import TVM: the TVM work (the loader kernel,
:mod:`seedzer.kernel.load.observe`) happens in isolated processes (:mod:`seedzer.execute.isolated_load`).
"""

from seedzer.load.loader import AttemptResult, LoaderFailure, LoadOptions, ModelLoad, load_all, pool_models

__all__ = ["AttemptResult", "LoadOptions", "LoaderFailure", "ModelLoad", "load_all", "pool_models"]
