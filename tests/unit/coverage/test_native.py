"""Campaign-side set-up of native collectors: spec options, known blocks marked, missing extension."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from seedzer.coverage import native
from seedzer.coverage.blocktable import load_or_build
from seedzer.coverage.bpcollector import BreakpointCollector, extension
from seedzer.coverage.collectors import CollectorSpec, make_collector
from seedzer.coverage.hitmap import HitMap
from seedzer.errors import ConfigError
from tests.unit.toylib import build_toylib


def test_passes_needs_no_collector_and_unknown_backends_get_a_bare_spec(tmp_path: Path) -> None:
    assert native.prepare_collector("passes", tmp_path, [], str(tmp_path), "blocks") is None
    assert native.prepare_collector("other", tmp_path, [], str(tmp_path), "blocks") == CollectorSpec("other")


def test_breakpoints_setup_marks_known_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("seedzer.coverage._bpcov", reason="C extension not built (no compiler)")
    lib = build_toylib(tmp_path)
    monkeypatch.setattr(native, "tvm_compiler_library", lambda: lib)
    table = load_or_build(lib, tmp_path / "cache", "blocks", progress=False)
    known = [table.feature(1), table.feature(3), "opt/Simplify:=", "bp:tvm:ffffff"]
    spec = native.prepare_collector("breakpoints", tmp_path, known, str(tmp_path / "cache"), "blocks")
    assert spec is not None and spec.name == "breakpoints"
    assert spec.options["hitmap"] == str(tmp_path / native.HITMAP_FILE)
    hm = HitMap(spec.options["hitmap"], len(table.offsets))
    assert hm.array.nonzero()[0].tolist() == [1, 3]
    collector = make_collector(spec)
    assert isinstance(collector, BreakpointCollector) and collector.take() == []


def test_missing_extension_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import seedzer.coverage

    monkeypatch.setitem(sys.modules, "seedzer.coverage._bpcov", None)
    monkeypatch.delattr(seedzer.coverage, "_bpcov", raising=False)
    with pytest.raises(ConfigError) as err:
        extension()
    assert "\n" not in str(err.value) and "_bpcov is not built" in str(err.value)


def test_collector_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="lack hitmap"):
        make_collector(CollectorSpec("breakpoints", {"library": "x", "cache_dir": "y", "granularity": "blocks"}))
    with pytest.raises(ConfigError, match="unknown coverage collector 'frida'"):
        make_collector(CollectorSpec("frida"))
