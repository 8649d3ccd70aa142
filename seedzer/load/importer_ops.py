"""The operators TVM's ONNX importer converts: the keys of its converter map, read from the installed
TVM at run time (``tvm.relax.frontend.onnx.onnx_frontend._get_convert_map()``), never kept by hand.

A process that imported TVM already (a worker) reads the map directly; any other (the campaign,
``status``, ``pool stats``), which never imports TVM, asks a child Python once (a few seconds) and
remembers the answer.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys

IMPORTER_MODULE = "tvm.relax.frontend.onnx.onnx_frontend"
"""The module holding TVM's ONNX converter map."""
_CHILD = ("import json\nfrom tvm.relax.frontend.onnx import onnx_frontend as f\n"
          "print(json.dumps(sorted(f._get_convert_map())))\n")


def _read_here() -> tuple[str, ...]:
    from tvm.relax.frontend.onnx import onnx_frontend

    return tuple(sorted(onnx_frontend._get_convert_map()))


@functools.lru_cache(maxsize=1)
def importer_operators() -> tuple[str, ...]:
    """The ONNX operator types TVM's importer converts, sorted (empty when TVM cannot be imported)."""
    if IMPORTER_MODULE in sys.modules or "tvm" in sys.modules:
        try:
            return _read_here()
        except Exception:  # a TVM without the ONNX frontend
            return ()
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=300,
                              check=False)
        return tuple(json.loads(done.stdout.strip().splitlines()[-1])) if done.returncode == 0 else ()
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return ()
