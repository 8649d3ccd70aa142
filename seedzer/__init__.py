"""Seedzer: seed-pool driven, coverage-guided fuzzing of the Apache TVM compiler.

Importing the package sets ``ORT_DISABLE_TELEMETRY=1`` (unless the environment already sets it), for
this process and the ones it starts (workers, the gate, reproducers it runs): without it onnxruntime
writes a device id and a database under ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/`` (or
``$XDG_CACHE_HOME``) at every import, from every process, for its telemetry.
"""

import os

__version__ = "0.1.0"

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
