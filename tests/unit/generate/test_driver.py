"""The fill loop and generate_pool with a cheap fake generator: resume, interruption, selection,
impossible constraints, determinism of seeds, and the CLI commands."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from seedzer.commands.generate import generate_cmd, pool_group
from seedzer.errors import ConfigError, PoolError
from seedzer.generate import GenerationError, derive_seed, generate_pool, pool_models, read_manifest
from seedzer.generate import driver as driver_mod
from seedzer.generate.driver import AttemptResult
from seedzer.generate.seed_pool import PoolWriter
from tests.unit.generate.test_seed_pool import tiny_model


def _fake(reject_every: int = 4, stop_after: int | None = None, kernel: int = 3, grow: bool = False) -> Any:
    """A stand-in for driver._results: tiny models, every ``reject_every``-th attempt rejected."""

    def results(
        opts: Any, writer: PoolWriter, *, jobs: int, seed: int, cache_dir: Path, source: str, first_index: int = 0,
        pace: Any = None, varied: Any = None,
    ) -> Iterator[AttemptResult]:
        produced = 0
        for i in itertools.count(first_index):
            if i in writer.tried:
                continue
            if pace is not None:
                pace()
            if stop_after is not None and produced >= stop_after:
                raise KeyboardInterrupt
            s = derive_seed(seed, i)
            if i % reject_every == reject_every - 1:
                yield AttemptResult(i, s, reason="z3 unsat", detail="fake")
            else:
                produced += 1
                channels = i + 1 if grow else None  # grow: later attempts make bigger models
                yield AttemptResult(i, s, model=tiny_model(s, kernel=kernel, channels=channels))

    return results


def _hashes(pool: Path) -> list[str]:
    return [e["sha256"] for e in read_manifest(pool)["models"]]


def test_derive_seed_is_stable_and_distinct() -> None:
    seeds = [derive_seed(0, i) for i in range(1000)]
    assert len(set(seeds)) == 1000 and all(0 <= s < 2**32 for s in seeds)
    assert derive_seed(0, 5) == derive_seed(0, 5) != derive_seed(1, 5)


def test_generate_then_resume_to_a_larger_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_mod, "_results", _fake())
    out = tmp_path / "basic"
    s1 = generate_pool("basic", 5, out, progress=False)
    assert (s1.made, s1.total, s1.rejected) == (5, 5, {"z3 unsat": 1})
    first = _hashes(out)
    s2 = generate_pool("basic", 8, out, progress=False)
    assert s2.made == 3 and s2.total == 8
    assert _hashes(out)[:5] == first
    data = read_manifest(out)
    assert {r["index"] for r in data["rejected"]} == {3, 7}
    assert len(pool_models(out)) == 8
    s3 = generate_pool("basic", 8, out, progress=False)  # complete: nothing to do
    assert s3.made == 0 and s3.attempts == 0


def test_interrupted_run_keeps_complete_models_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "p"
    monkeypatch.setattr(driver_mod, "_results", _fake(stop_after=3))
    with pytest.raises(KeyboardInterrupt):
        generate_pool("basic", 6, out, progress=False)
    data = read_manifest(out)
    assert len(data["models"]) == 3
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    monkeypatch.setattr(driver_mod, "_results", _fake())
    generate_pool("basic", 6, out, progress=False)
    reference = tmp_path / "ref"
    generate_pool("basic", 6, reference, progress=False)
    assert _hashes(out) == _hashes(reference)  # same pool as an uninterrupted run


def test_nothing_producible_is_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_mod, "_results", _fake(reject_every=1))
    with pytest.raises(GenerationError) as info:
        generate_pool("conv3", 3, tmp_path / "p", progress=False, attempt_limit=7)
    msg = str(info.value)
    assert "\n" not in msg and "conv3" in msg and "no valid model after 7 attempts" in msg and "z3 unsat x7" in msg
    assert read_manifest(tmp_path / "p")["rejected_counts"] == {"z3 unsat": 7}


def test_attempt_limit_stops_a_partial_run_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_mod, "_results", _fake(reject_every=2))
    s = generate_pool("basic", 10, tmp_path / "p", progress=False, attempt_limit=6)
    assert s.total == 3 and s.attempts == 6 and any("3 of 10" in n for n in s.notes)


def test_selecting_heuristic_generates_candidates_then_selects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_mod, "_results", _fake(reject_every=100))
    out = tmp_path / "small"
    s = generate_pool("small", 3, out, progress=False)
    assert s.total == 3 and s.made == 12
    candidates = read_manifest(out / "candidates")["models"]
    chosen = read_manifest(out)["models"]
    assert len(candidates) == 12 and read_manifest(out)["selected_from"] == "candidates"
    smallest = sorted(e["weights"] for e in candidates)[:3]
    assert sorted(e["weights"] for e in chosen) == smallest
    for path in pool_models(out):
        assert path.is_file() and path.parent == out


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--count"):
        generate_pool("basic", 0, tmp_path / "p")
    with pytest.raises(ConfigError, match="unknown heuristic"):
        generate_pool("nope", 1, tmp_path / "p")


def test_cli_generate_stats_and_select(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_mod, "_results", _fake())
    runner = CliRunner()
    out = tmp_path / "basic"
    res = runner.invoke(generate_cmd, ["--heuristic", "basic", "--count", "4", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "models in pool" in res.output and "rejected: z3 unsat" in res.output
    res = runner.invoke(pool_group, ["stats", str(out)])
    assert res.exit_code == 0 and "conv kernel sizes" in res.output and "3x3" in res.output and "Conv" in res.output
    dst = tmp_path / "sel"
    res = runner.invoke(pool_group, ["select", "--heuristic", "small", "--count", "2", str(out), str(dst)])
    assert res.exit_code == 0, res.output
    assert len(pool_models(dst)) == 2 and json.loads((dst / "manifest.json").read_text())["selection"]["count"] == 2
    res = runner.invoke(pool_group, ["select", "--heuristic", "small", str(dst), str(out)])
    assert isinstance(res.exception, PoolError)  # never overwrite a generated pool
    res = runner.invoke(generate_cmd, ["--heuristic", "nope", "--count", "1", "--out", str(tmp_path / "x")])
    assert isinstance(res.exception, ConfigError)
    res = runner.invoke(pool_group, ["stats", str(tmp_path / "missing")])
    assert isinstance(res.exception, PoolError) and "missing" in str(res.exception)


def test_every_cli_option_has_help() -> None:
    commands = [generate_cmd, *pool_group.commands.values()]
    for cmd in commands:
        assert cmd.help
        for param in cmd.params:
            if param.param_type_name == "option":
                assert getattr(param, "help", None), f"{cmd.name} {param.name} has no help"


def test_selection_does_not_depend_on_earlier_larger_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_mod, "_results", _fake(reject_every=100, grow=True))
    generate_pool("big", 3, tmp_path / "grown", progress=False)
    generate_pool("big", 2, tmp_path / "grown", progress=False)  # 12 candidates exist; a fresh run makes 8
    generate_pool("big", 2, tmp_path / "fresh", progress=False)
    assert _hashes(tmp_path / "grown") == _hashes(tmp_path / "fresh")
    assert [e["index"] for e in read_manifest(tmp_path / "fresh")["models"]] == [7, 6]
    assert len(read_manifest(tmp_path / "grown" / "candidates")["models"]) == 12


def test_an_epoch_pool_numbers_its_models_from_its_first_index_and_paces_every_attempt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from seedzer.generate.driver import generate_epoch_pool
    from seedzer.generate.heuristics import load_heuristic

    monkeypatch.setattr(driver_mod, "_results", _fake(reject_every=3))
    h = load_heuristic("basic")
    paced: list[int] = []
    out = tmp_path / "epoch-1"
    made = generate_epoch_pool(h, h.generation, out, 2, seed=5, first_index=200_000, cache_dir=tmp_path,
                               pace=lambda: paced.append(1))
    # attempt 200000 is rejected (every third attempt is, counting from 0)
    assert [e["file"] for e in read_manifest(out)["models"]] == ["model_200001.onnx", "model_200002.onnx"]
    assert made.made == 2 and len(paced) == 3
    generate_epoch_pool(h, h.generation, out, 3, seed=5, first_index=200_000, cache_dir=tmp_path,
                        pace=lambda: paced.append(1))  # resumed: the rejected attempt is not made again
    assert [e["index"] for e in read_manifest(out)["models"]] == [200_001, 200_002, 200_004]
    assert len(paced) == 5
    assert "attribute_weights" not in read_manifest(out)  # no attribute weights given: one setting


def test_an_epoch_pool_with_attribute_weights_records_them_and_is_resumed_only_with_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from seedzer.errors import PoolError
    from seedzer.generate.driver import generate_epoch_pool
    from seedzer.generate.heuristics import load_heuristic

    seen: list[Any] = []
    fake = _fake(reject_every=3)

    def results(*args: Any, **kwargs: Any) -> Iterator[AttemptResult]:
        seen.append(kwargs.get("varied"))
        return fake(*args, **kwargs)

    monkeypatch.setattr(driver_mod, "_results", results)
    h = load_heuristic("basic")
    out = tmp_path / "epoch-2"
    weights = {"nodes=more": 1.7, "kernel=3": 0.2}
    generate_epoch_pool(h, h.generation, out, 2, seed=5, first_index=200_000, cache_dir=tmp_path, pace=lambda: None,
                        attributes=weights)
    assert seen == [weights] and read_manifest(out)["attribute_weights"] == weights
    generate_epoch_pool(h, h.generation, out, 3, seed=5, first_index=200_000, cache_dir=tmp_path, pace=lambda: None,
                        attributes=weights)  # the epoch resumed with its weights (weights.json is drawn once)
    assert len(read_manifest(out)["models"]) == 3
    with pytest.raises(PoolError):
        generate_epoch_pool(h, h.generation, out, 4, seed=5, first_index=200_000, cache_dir=tmp_path,
                            pace=lambda: None, attributes={"nodes=more": 0.1})
