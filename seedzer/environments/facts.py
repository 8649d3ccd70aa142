"""The environment a bug report states: TVM's version and the commit its wheel was built from, the LLVM it
links, Python, the operating system and the versions of the packages a reproducer names, read from the
interpreter that ran the reproducer (a subprocess: nothing here imports TVM)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

from seedzer.errors import SeedzerError

_PROBE = r'''
import json, platform, sys
from importlib import metadata
out = {"python": platform.python_version(), "os": platform.platform(), "packages": {}}
for name in ("apache-tvm", "numpy", "onnx", "onnxruntime"):
    try:
        out["packages"][name] = metadata.version(name)
    except Exception:
        pass
try:
    import tvm
    out["tvm"] = tvm.__version__
    info = dict(tvm.support.libinfo())
    commit = getattr(getattr(tvm, "_version", None), "commit_id", None) or info.get("GIT_COMMIT_HASH")
    out["commit"] = (commit[1:] if commit and commit.startswith("g") and len(commit) > 7 else commit) or None
    llvm = info.get("LLVM_VERSION")
    if not llvm:
        try:
            llvm = str(tvm.target.codegen.llvm_version_major())
        except Exception:
            llvm = None
    out["llvm"] = llvm
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
print("seedzer-facts " + json.dumps(out))
'''


@dataclass(frozen=True)
class EnvironmentFacts:
    """What :func:`probe` read: versions (None: not found), the packages it has, and why TVM could not
    be read (``error``)."""

    python: str
    os: str
    tvm: str | None = None
    commit: str | None = None
    llvm: str | None = None
    packages: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> EnvironmentFacts:
        """Inverse of :meth:`to_json`."""
        return EnvironmentFacts(str(data.get("python", "?")), str(data.get("os", "?")), data.get("tvm"),
                                data.get("commit"), data.get("llvm"), dict(data.get("packages") or {}),
                                data.get("error"))


def probe(python: str, timeout: float = 300.0) -> EnvironmentFacts:
    """The facts of interpreter ``python`` (a one-line error when it does not answer)."""
    try:
        proc = subprocess.run([python, "-I", "-c", _PROBE], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SeedzerError(f"{python}: cannot read its environment ({exc})") from None
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("seedzer-facts ")), None)
    if line is None:
        said = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SeedzerError(f"{python}: cannot read its environment ({said[:200]})")
    return EnvironmentFacts.from_json(json.loads(line.split(" ", 1)[1]))
