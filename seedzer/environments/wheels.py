"""Which TVM an environment holds: a released ``apache-tvm`` version on the package index, or a local
wheel file (a nightly or a build of one's own), each checked before anything is created."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import UsageError, shown

TVM_DISTRIBUTION = "apache-tvm"
"""The name TVM's wheels are published under on PyPI."""
VERSION = re.compile(r"^\d+(\.\d+){1,3}((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")
"""A PEP 440 release as TVM numbers them (``0.27.0``, ``0.27.0.post1``, ``0.28.0rc1``, ``0.28.dev0``)."""


@dataclass(frozen=True)
class TvmSource:
    """One TVM to install: a released ``version`` of :data:`TVM_DISTRIBUTION`, or a local ``wheel``."""

    version: str | None = None
    wheel: Path | None = None

    @property
    def label(self) -> str:
        """How tables name it: the version, or the wheel's file name."""
        return self.version if self.version is not None else Path(str(self.wheel)).name

    def requirement(self) -> str:
        """What pip installs for it."""
        if self.wheel is not None:
            return str(self.wheel)
        return f"{TVM_DISTRIBUTION}=={self.version}"


def check_wheel(path: Path) -> Path:
    """``path`` resolved when it is a wheel holding the ``tvm`` package; else a one-line error naming it."""
    if not path.is_file():
        raise UsageError(f"{shown(path)}: no such wheel file")
    if path.suffix != ".whl":
        raise UsageError(f"{shown(path)}: not a wheel (a .whl file)")
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise UsageError(f"{shown(path)}: not a readable wheel ({exc})") from None
    tops = sorted({n.split("/", 1)[0] for n in names if "/" in n and not n.split("/", 1)[0].endswith(
        (".dist-info", ".data"))})
    if "tvm/__init__.py" not in names:
        held = ", ".join(tops[:5]) or "no package"
        raise UsageError(f"{shown(path)}: not a TVM wheel (it holds {held}, not the tvm package)")
    return path.resolve()


def tvm_source(text: str) -> TvmSource:
    """A ``--version`` value: a released version (``0.26.0``) or a path to a local wheel."""
    if text.endswith(".whl") or "/" in text:
        return TvmSource(wheel=check_wheel(Path(text).expanduser()))
    if not VERSION.match(text):
        raise UsageError(f"--version {text}: neither a TVM release number (e.g. 0.26.0) nor a path to a .whl file")
    return TvmSource(version=text)
