"""Reading a finding folder's files: :func:`seedzer.finding.meta.read_inside`."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedzer.errors import SeedzerError
from seedzer.finding.meta import read_inside


def test_read_inside_returns_the_text(tmp_path: Path) -> None:
    (tmp_path / "ir.py").write_text("x = 1\n", encoding="utf-8")
    assert read_inside(tmp_path, "ir.py") == "x = 1\n"


def test_read_inside_names_an_undecodable_file(tmp_path: Path) -> None:
    (tmp_path / "ir.py").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(SeedzerError, match=r"ir\.py: unreadable"):
        read_inside(tmp_path, "ir.py")


def test_read_inside_refuses_a_path_out_of_the_folder(tmp_path: Path) -> None:
    with pytest.raises(SeedzerError, match="leaves the finding's folder"):
        read_inside(tmp_path / "f", "../x")
