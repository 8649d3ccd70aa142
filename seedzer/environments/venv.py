"""Cached virtual environments: one directory per TVM and package set, created once and reused.

``ensure_env(spec, root)`` returns the environment named after the spec under ``root`` (for instance
``~/.cache/seedzer/venvs/tvm-0.26.0-numpy-py311``), creating it the first time: ``python -m venv``,
then pip installs the TVM (a release from the package index or a local wheel) and the pinned packages,
then ``import tvm`` must work. The environment is usable only once its marker file is written, last;
a half-made one (a killed creation) is removed and made again. Creation holds an exclusive lock on
``<root>/.<name>.lock``, so two processes never build one environment at once; a program running in
an environment holds ``<root>/.<name>.use`` (shared), and every use marks the marker's time (its last
use: what :mod:`seedzer.environments.cache` lists and prunes by). Nothing is downloaded
but what pip fetches from the package index the user's pip is configured with.

Errors are one line: a version the index does not have (with the versions it has), a wheel pip
refuses, an environment that cannot import the TVM it holds.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from seedzer.environments.wheels import TvmSource
from seedzer.errors import SeedzerError, UsageError, shown

MARKER = "seedzer-env.json"
"""Written last into a finished environment: its spec and when it was made."""
NO_VERSION = re.compile(r"Could not find a version that satisfies the requirement (\S+) \(from versions: ([^)]*)\)")
"""pip's words for a requirement the index has no release of."""


def pinned(names: Sequence[str]) -> tuple[str, ...]:
    """``name==version`` of each package as this interpreter has it (the name alone where it has none),
    so a reproducer runs with the packages the finding was made with."""
    out = []
    for name in names:
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(name)
    return tuple(out)


@dataclass(frozen=True)
class EnvSpec:
    """What an environment holds: one TVM and the pinned ``packages`` (``numpy==2.4.6``...)."""

    tvm: TvmSource
    packages: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The environment's directory name: the TVM, the packages' names, the Python (``py311``)."""
        label = self.tvm.version or ""
        if self.tvm.wheel is not None:
            wheel = Path(self.tvm.wheel)
            stamp = f"{wheel}:{wheel.stat().st_mtime_ns if wheel.exists() else 0}"
            label = f"wheel-{hashlib.sha256(stamp.encode()).hexdigest()[:10]}"
        names = "+".join(p.split("==")[0] for p in self.packages) or "alone"
        pins = hashlib.sha256("\n".join(self.packages).encode()).hexdigest()[:6]
        return f"tvm-{label}-{names}-{pins}-py{sys.version_info[0]}{sys.version_info[1]}"


def creation_lock(path: Path) -> Path:
    """The file an environment's creation holds locked (exclusively): ``<root>/.<name>.lock``."""
    return path.parent / f".{path.name}.lock"


def use_lock(path: Path) -> Path:
    """The file a program running in an environment holds locked (shared): ``<root>/.<name>.use``; pruning
    never removes an environment whose use lock another process holds."""
    return path.parent / f".{path.name}.use"


@dataclass(frozen=True)
class Environment:
    """A finished environment: where it is, whether this call created it and how long that took."""

    spec: EnvSpec
    path: Path
    created: bool = False
    seconds: float = 0.0

    @property
    def python(self) -> Path:
        """Its interpreter."""
        return self.path / "bin" / "python"

    @contextmanager
    def in_use(self) -> Iterator[None]:
        """Hold the environment's use lock (shared) while a program runs in it."""
        try:
            lock = open(use_lock(self.path), "a")  # noqa: SIM115 - held for the block
        except OSError:  # a cache directory this user cannot write: nobody can prune it either
            yield
            return
        with lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_SH)
            yield


def ready(path: Path) -> bool:
    """Whether ``path`` is a finished environment (its marker, written last, is there)."""
    return (path / MARKER).is_file() and (path / "bin" / "python").exists()


def mark_used(path: Path) -> None:
    """Record that the environment at ``path`` is used now (its marker's modification time)."""
    with suppress(OSError):  # a read-only cache: its last use stays its creation
        os.utime(path / MARKER)


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        raise SeedzerError(f"{' '.join(cmd[:4])} ...: did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise SeedzerError(f"{cmd[0]}: cannot run ({exc.strerror or exc})") from None


def _pip_error(spec: EnvSpec, output: str) -> SeedzerError:
    """The one line saying why pip could not install ``spec``."""
    missing = NO_VERSION.search(output)
    if missing is not None:
        wanted, versions = missing.group(1), missing.group(2).strip()
        if wanted.lower().startswith("apache-tvm"):
            return UsageError(f"{wanted}: no such version on the package index (it has: {versions or 'none'})")
        return SeedzerError(f"{wanted}: not on the package index (it has: {versions or 'none'})")
    lines = [ln.strip() for ln in output.splitlines() if ln.strip().startswith(("ERROR", "error"))]
    why = lines[-1] if lines else (output.strip().splitlines() or ["no output"])[-1]
    return SeedzerError(f"{spec.tvm.requirement()}: pip could not install it ({why[:240]})")


_IMPORT_TVM = "import tvm; print(tvm.__version__)"
_FFI_FLOOR = r"""
from importlib import metadata
import re
for req in metadata.requires("apache-tvm") or []:
    found = re.match(r"apache-tvm-ffi\s*>=\s*([\w.]+)", req)
    if found:
        print(found.group(1))
"""


def _lowest_ffi(python: str, pip_args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str] | None:
    """A released TVM whose libraries no longer link against the newest ``apache-tvm-ffi`` (an undefined
    symbol at import) gets the lowest ``apache-tvm-ffi`` its wheel accepts, the one it was built with;
    the import's result then (None: the wheel names no such floor)."""
    floor = _run([python, "-I", "-c", _FFI_FLOOR], 120).stdout.strip()
    if not floor:
        return None
    _run([python, "-m", "pip", "install", "--no-input", "--disable-pip-version-check", *pip_args,
          f"apache-tvm-ffi=={floor}"], timeout)
    return _run([python, "-I", "-c", _IMPORT_TVM], 300)


def _create(spec: EnvSpec, path: Path, pip_args: Sequence[str], timeout: float) -> None:
    made = _run([sys.executable, "-m", "venv", str(path)], timeout)
    if made.returncode != 0:
        raise SeedzerError(f"{shown(path)}: python -m venv failed ({(made.stderr.strip().splitlines() or ['?'])[-1]})")
    python = str(path / "bin" / "python")
    install = _run([python, "-m", "pip", "install", "--no-input", "--disable-pip-version-check", *pip_args,
                    spec.tvm.requirement(), *spec.packages], timeout)
    if install.returncode != 0:
        raise _pip_error(spec, install.stdout + install.stderr)
    check = _run([python, "-I", "-c", _IMPORT_TVM], 300)
    if check.returncode != 0 and "undefined symbol" in check.stderr:
        check = _lowest_ffi(python, pip_args, timeout) or check
    if check.returncode != 0:
        said = (check.stderr.strip().splitlines() or ["?"])[-1]
        raise SeedzerError(f"{spec.tvm.requirement()}: installed, but `import tvm` fails there ({said[:200]})")
    record = {"tvm": spec.tvm.label, "requirement": spec.tvm.requirement(), "packages": list(spec.packages),
              "tvm_version": check.stdout.strip(), "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
    (path / MARKER).write_text(json.dumps(record, indent=1))


def ensure_env(spec: EnvSpec, root: Path, pip_args: Sequence[str] = (), timeout: float = 1800.0) -> Environment:
    """The environment of ``spec`` under ``root``, created first when there is none (see the module
    docstring); ``pip_args`` go to pip (tests point it at a local directory of wheels)."""
    root = Path(root).expanduser()
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = open(creation_lock(root / spec.name), "a")  # noqa: SIM115 - held until the environment is ready
    except OSError as exc:
        why = exc.strerror or exc
        raise SeedzerError(f"{shown(root)}: cannot create the environments' directory ({why})") from None
    path = root / spec.name
    start = time.monotonic()
    with lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if ready(path):
            mark_used(path)
            return Environment(spec, path)
        if path.exists():
            shutil.rmtree(path)  # a half-made environment of a killed creation
        try:
            _create(spec, path, pip_args, timeout)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
    return Environment(spec, path, created=True, seconds=time.monotonic() - start)


def existing_envs(root: Path) -> list[Path]:
    """The finished environments under ``root``."""
    root = Path(root).expanduser()
    return sorted(p for p in root.glob("tvm-*") if ready(p)) if root.is_dir() else []


__all__ = ["MARKER", "EnvSpec", "Environment", "creation_lock", "ensure_env", "existing_envs", "mark_used", "pinned",
           "ready", "use_lock"]
