"""Which TVM an environment holds: versions and local wheels, checked before anything is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedzer.environments.wheels import TvmSource, check_wheel, tvm_source
from seedzer.errors import UsageError
from tests.unit.environments.fake_wheel import fake_tvm, make_wheel


def test_a_release_number_is_a_version() -> None:
    source = tvm_source("0.27.0.post1")
    assert source == TvmSource(version="0.27.0.post1")
    assert source.requirement() == "apache-tvm==0.27.0.post1" and source.label == "0.27.0.post1"


@pytest.mark.parametrize("text", ["latest", "0.27.x", "v0.26"])
def test_anything_else_is_a_one_line_error(text: str) -> None:
    with pytest.raises(UsageError, match=r"^--version .*neither a TVM release number") as info:
        tvm_source(text)
    assert "\n" not in str(info.value)


def test_a_tvm_wheel_is_accepted_by_its_path(tmp_path: Path) -> None:
    wheel = fake_tvm(tmp_path)
    source = tvm_source(str(wheel))
    assert source.wheel == wheel.resolve() and source.label == wheel.name
    assert source.requirement() == str(wheel.resolve())


def test_a_wheel_that_is_not_tvm_is_refused_naming_what_it_holds(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "numpy-lookalike", "1.0", {"numpy_lookalike/__init__.py": ""})
    with pytest.raises(UsageError) as info:
        check_wheel(wheel)
    assert str(info.value) == f"{wheel}: not a TVM wheel (it holds numpy_lookalike, not the tvm package)"


def test_a_missing_or_broken_wheel_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such wheel file"):
        check_wheel(tmp_path / "gone.whl")
    broken = tmp_path / "broken.whl"
    broken.write_text("not a zip")
    with pytest.raises(UsageError, match="not a readable wheel"):
        check_wheel(broken)
    other = tmp_path / "tvm.tar.gz"
    other.write_text("")
    with pytest.raises(UsageError, match=r"not a wheel \(a \.whl file\)"):
        check_wheel(other)
