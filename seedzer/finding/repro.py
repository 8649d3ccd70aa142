"""Standalone reproducers: the case's data followed by the kernel's own code, copied verbatim.

A ``repro.py`` needs only the engines under test (``pip install apache-tvm==<version> numpy``, plus
``onnx onnxruntime`` for a load finding). Its code is the text of the shared kernel modules
(:mod:`seedzer.kernel.comparison`, :mod:`~seedzer.kernel.common`, :mod:`~seedzer.kernel.messages`)
and of the kernel module of its kind (below their marker lines; their imports are gathered at the top),
so it runs exactly what the fuzzer, the filing gate and the reducer ran. Rendering only reads text:
the campaign process renders without importing TVM.

Exit status: 1 while the bug is present (a crash dies by its signal, a hang exits 1 after its time
limit), 0 once it is gone, 2 on a different failure, 3 when the environment is broken (an import
fails): a broken interpreter is never mistaken for a fixed or a present bug.
"""

from __future__ import annotations

import pprint
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from seedzer.errors import SeedzerError
from seedzer.kernel import MARKER
from seedzer.kernel.common import EXIT_BROKEN

TVM_VERSION = "0.27.0.post1"
SHARED_KERNELS = ("comparison", "common", "messages")
"""Kernel modules every reproducer carries first, in this order (each needs only those before it);
the kernel module of the finding's kind follows them."""

_SEEDZER_IMPORT = re.compile(r"^from seedzer\.[\w.]+ import \((?:.|\n)*?\)\n|^from seedzer\.[\w.]+ import .*\n",
                             re.MULTILINE)


def kernel_source(module: str) -> tuple[str, str]:
    """The text of kernel module ``module`` (relative to :mod:`seedzer.kernel`, e.g. ``tir.observe``)
    split at its marker line: its head (docstring, imports) and the code a reproducer copies."""
    *wing, name = module.split(".")
    text = resources.files("seedzer.kernel").joinpath(*wing, f"{name}.py").read_text()
    head, code = text.split(MARKER + "\n", 1)
    return head, code


def _split(module: str) -> tuple[list[str], str]:
    """A kernel module's import lines (Seedzer's own removed) and its code below the marker."""
    head, code = kernel_source(module)
    head = _SEEDZER_IMPORT.sub("", head.split("from __future__ import annotations\n", 1)[1])
    imports = [ln for ln in head.splitlines() if ln.startswith(("import ", "from "))]
    return imports, code


def kernel_code(kernel: str) -> tuple[list[str], str]:
    """The import lines and the code of the kernel modules a reproducer carries: the shared ones,
    then ``seedzer.kernel.<kernel>`` (its kind's; ``a+b`` names several, each needing only those
    before it, the last one's ``main`` being the entry point)."""
    imports: list[str] = []
    parts = []
    for module in (*SHARED_KERNELS, *kernel.split("+")):
        lines, code = _split(module)
        imports.extend(ln for ln in lines if ln not in imports)
        parts.append(f"# ---- seedzer.kernel.{module} ----\n{code.strip()}\n")
    return imports, "\n\n".join(parts)


def _literal(text: str) -> str:
    if "'''" not in text and "\\" not in text:
        return "r'''" + text.rstrip("\n") + "\n'''"
    return repr(text)


_HEADER = '''#!/usr/bin/env python3
"""Seedzer reproducer{finding}: {title}

Needs only: pip install apache-tvm=={tvm} {needs}
Run: python repro.py
Exit status: 1 = bug reproduced ({how}), 0 = bug gone, 2 = a different failure,
3 = broken environment (an import failed).
{about}
"""

from __future__ import annotations

import sys

try:
{imports}
except ImportError as exc:  # a broken interpreter says nothing about the bug
    print(f"broken environment: {{exc}}", file=sys.stderr)
    sys.exit({broken})
'''


def render(kernel: str, needs: str, case: dict[str, Any], *, title: str, about: str = "", finding: str = "",
           big: dict[str, str] | None = None) -> str:
    """The text of a standalone ``repro.py`` for ``case`` (a kernel case's JSON form), carrying the
    kernel module ``kernel`` (its kind's) and needing ``needs`` from PyPI beside apache-tvm.

    ``big`` names case fields printed as separate string literals for readability (e.g. the TVMScript).
    """
    imports, code = kernel_code(kernel)
    big = big or {}
    crash = (case.get("expected") or {}).get("symptom") == "crash"
    header = _HEADER.format(finding=f" for finding {finding}" if finding else "", title=title.replace('"""', "'''"),
                            tvm=TVM_VERSION, needs=needs, how="killed by a signal" if crash else "exit status 1",
                            about=about.replace('"""', "'''").replace("\\", "/"), broken=EXIT_BROKEN,
                            imports="\n".join("    " + ln for ln in imports))
    rest = {k: v for k, v in case.items() if k not in big}
    parts = [header]
    for field_name, var in big.items():
        parts.append(f"{var} = {_literal(str(case[field_name]))}\n")
    parts.append("nan, inf = float('nan'), float('inf')  # non-finite values of CASE, as Python prints them\n")
    parts.append("CASE = " + pprint.pformat(rest, width=110, sort_dicts=False))
    for field_name, var in big.items():
        parts.append(f"CASE[{field_name!r}] = {var}")
    parts.append("\n\n" + code)
    parts.append('\nif __name__ == "__main__":\n    sys.exit(main(CASE))\n')
    return "\n".join(parts)


@dataclass
class ReproRun:
    """How a reproducer ended in a clean interpreter: exit status (negative: killed by that signal;
    None: it ran over its time limit), seconds, and the tail of its output."""

    returncode: int | None
    seconds: float
    output: str


_PROBE = "import sys; print('seedzer-python', sys.version_info[0])"


def check_interpreter(python: str, option: str = "--python", timeout: float = 60.0) -> None:
    """Refuse, in one line naming ``option``, an interpreter that is missing or is no Python 3.

    Asked before any finding is touched, so a typo costs one line rather than a reproducer run
    (or a reduction) per finding."""
    label = f"{option} {python}"
    try:
        proc = subprocess.run([python, "-I", "-c", _PROBE], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise SeedzerError(f"{label}: the interpreter did not answer within {timeout:g} s") from None
    except (OSError, ValueError) as exc:
        raise SeedzerError(f"{label}: cannot run the interpreter ({getattr(exc, 'strerror', None) or exc})") from None
    if proc.returncode != 0 or b"seedzer-python 3" not in proc.stdout:
        said = next((ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines()[::-1] if ln.strip()), "")
        raise SeedzerError(f"{label}: not a working Python 3 interpreter (exit status {proc.returncode}"
                           + (f": {said[:160]})" if said else ")"))


def run_repro(path: Path, python: str = sys.executable, timeout: float = 600.0) -> ReproRun:
    """Run a reproducer with ``python -I`` in its folder (a missing interpreter is a one-line error)."""
    start = time.monotonic()
    try:
        proc = subprocess.run([python, "-I", path.name], cwd=path.parent, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
        code: int | None = proc.returncode
        out = (proc.stdout + proc.stderr).decode(errors="replace")
    except subprocess.TimeoutExpired as exc:
        code, out = None, ((exc.stdout or b"") + (exc.stderr or b"")).decode(errors="replace")
    except OSError as exc:
        raise SeedzerError(f"{python}: cannot run the interpreter ({exc.strerror or exc})") from exc
    return ReproRun(code, time.monotonic() - start, out[-3000:])
