"""Tiny wheels made on disk for tests (nothing is downloaded): a fake ``apache-tvm`` and a wheel of something else."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def make_wheel(out: Path, dist: str, version: str, files: dict[str, str]) -> Path:
    """A valid pure-Python wheel of ``dist`` ``version`` holding ``files`` (path -> text) in ``out``."""
    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    content = dict(files)
    content[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
    content[f"{info}/WHEEL"] = ("Wheel-Version: 1.0\nGenerator: seedzer-tests\nRoot-Is-Purelib: true\n"
                                "Tag: py3-none-any\n")
    record = []
    for path, text in content.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    content[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in content.items():
            archive.writestr(path, text)
    return wheel


def fake_tvm(out: Path, version: str = "0.0.1") -> Path:
    """A wheel named apache-tvm whose ``tvm`` package only knows its version."""
    return make_wheel(out, "apache-tvm", version, {"tvm/__init__.py": f"__version__ = {version!r}\n"})
