"""Cached virtual environments: made once with pip from wheels on disk (no download), then reused; a release
the index does not have is one line, and leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from seedzer.environments.venv import MARKER, EnvSpec, _pip_error, ensure_env, existing_envs, pinned
from seedzer.environments.wheels import TvmSource
from seedzer.errors import SeedzerError, UsageError
from tests.unit.environments.fake_wheel import fake_tvm


def _offline(wheels: Path) -> tuple[str, ...]:
    return ("--no-index", "--find-links", str(wheels))


def test_an_environment_is_made_once_then_reused(tmp_path: Path) -> None:
    fake_tvm(tmp_path / "wheels", "0.0.1")
    spec = EnvSpec(TvmSource(version="0.0.1"))
    first = ensure_env(spec, tmp_path / "envs", _offline(tmp_path / "wheels"))
    assert first.created and (first.path / MARKER).is_file() and first.python.exists()
    again = ensure_env(spec, tmp_path / "envs", _offline(tmp_path / "wheels"))
    assert not again.created and again.path == first.path
    assert existing_envs(tmp_path / "envs") == [first.path]


def test_a_missing_release_is_one_line_naming_what_the_index_has_and_nothing_is_left(tmp_path: Path) -> None:
    fake_tvm(tmp_path / "wheels", "0.0.1")
    with pytest.raises(UsageError) as info:
        ensure_env(EnvSpec(TvmSource(version="9.9.9")), tmp_path / "envs", _offline(tmp_path / "wheels"))
    assert str(info.value) == "apache-tvm==9.9.9: no such version on the package index (it has: 0.0.1)"
    assert existing_envs(tmp_path / "envs") == []
    assert not [p for p in (tmp_path / "envs").iterdir() if not p.name.startswith(".")]


def test_a_half_made_environment_is_made_again(tmp_path: Path) -> None:
    fake_tvm(tmp_path / "wheels", "0.0.1")
    spec = EnvSpec(TvmSource(version="0.0.1"))
    (tmp_path / "envs" / spec.name).mkdir(parents=True)  # a creation killed before its marker
    made = ensure_env(spec, tmp_path / "envs", _offline(tmp_path / "wheels"))
    assert made.created and (made.path / MARKER).is_file()


def test_pip_failures_are_one_line() -> None:
    spec = EnvSpec(TvmSource(version="1.0"))
    other = _pip_error(spec, "ERROR: Could not find a version that satisfies the requirement onnx==99 "
                             "(from versions: 1.0, 1.1)\nERROR: No matching distribution found for onnx==99")
    assert isinstance(other, SeedzerError) and str(other) == "onnx==99: not on the package index (it has: 1.0, 1.1)"
    generic = _pip_error(spec, "Collecting x\nERROR: HTTP error 503 while getting https://pypi.org\n")
    assert str(generic) == "apache-tvm==1.0: pip could not install it (ERROR: HTTP error 503 while getting https://pypi.org)"


def test_packages_are_pinned_to_this_interpreters_versions() -> None:
    pins = pinned(["numpy", "surely-not-installed-here"])
    assert pins[0].startswith("numpy==") and pins[1] == "surely-not-installed-here"
