"""The cache of reproducer environments: listed with sizes and last use, pruned least recently used first,
bounded when a new environment is made, and never pruned under a program running in it. The environments
are real directories with a marker, an interpreter's place and a payload of known size."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from click.testing import CliRunner

from seedzer.cli import main
from seedzer.environments.cache import RECENT, cached_envs, ensure_bounded, prune
from seedzer.environments.venv import MARKER, Environment, EnvSpec
from seedzer.environments.wheels import TvmSource
from tests.unit.environments.fake_wheel import fake_tvm

MIB = 1 << 20
HOUR = 3600.0


def fake_env(root: Path, name: str, used_hours_ago: float, mib: int = 1, finished: bool = True) -> Path:
    """An environment directory ``root/tvm-<name>`` holding ``mib`` MiB, last used ``used_hours_ago`` hours ago
    (``finished=False``: a half-made one, without its marker)."""
    path = root / f"tvm-{name}"
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").write_text("#!/bin/sh\n")
    (path / "lib.so").write_bytes(os.urandom(mib * MIB))
    if finished:
        made = time.time() - used_hours_ago * HOUR - HOUR
        (path / MARKER).write_text(json.dumps({"tvm": name, "tvm_version": name, "packages": ["numpy==2.4.6"],
                                               "created": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(made))}))
        when = time.time() - used_hours_ago * HOUR
        os.utime(path / MARKER, (when, when))
    return path


def names(root: Path) -> list[str]:
    return [e.name for e in cached_envs(root)]


def test_the_cache_is_listed_least_recently_used_first_with_sizes(tmp_path: Path) -> None:
    fake_env(tmp_path, "new", 1, mib=2)
    fake_env(tmp_path, "old", 48)
    fake_env(tmp_path, "killed", 0, finished=False)
    (tmp_path / "not-an-env").mkdir()
    envs = cached_envs(tmp_path)
    assert [e.name for e in envs] == ["tvm-killed", "tvm-old", "tvm-new"]
    half, old, new = envs
    assert not half.finished and old.finished and new.finished
    assert 2 * MIB <= new.size < 2 * MIB + 256 * 1024 and MIB <= old.size < new.size
    assert old.tvm == "old" and old.packages == ("numpy==2.4.6",)
    assert abs(time.time() - 48 * HOUR - old.last_used) < 60 and old.created < old.last_used
    assert cached_envs(tmp_path / "none") == []


def test_prune_keeps_the_most_recently_used_and_removes_half_made_ones_first(tmp_path: Path) -> None:
    for n, hours in enumerate((30, 20, 10, 5)):
        fake_env(tmp_path, f"e{n}", hours)
    fake_env(tmp_path, "killed", 0, finished=False)
    pruned = prune(tmp_path, keep=2)
    assert [e.name for e in pruned.removed] == ["tvm-killed", "tvm-e0", "tvm-e1"] and pruned.busy == []
    assert names(tmp_path) == ["tvm-e2", "tvm-e3"] and not (tmp_path / "tvm-e0").exists()
    assert prune(tmp_path).removed == []  # no bound given: only half-made ones go


def test_prune_by_age_and_by_size(tmp_path: Path) -> None:
    for n, hours in enumerate((100, 50, 2, 1)):
        fake_env(tmp_path, f"e{n}", hours)
    assert [e.name for e in prune(tmp_path, older_than=24 * HOUR).removed] == ["tvm-e0", "tvm-e1"]
    pruned = prune(tmp_path, max_bytes=int(1.5 * MIB))
    assert [e.name for e in pruned.removed] == ["tvm-e2"] and pruned.freed() >= MIB
    assert names(tmp_path) == ["tvm-e3"]


def test_prune_never_removes_an_environment_in_use_spared_or_just_used(tmp_path: Path) -> None:
    busy = fake_env(tmp_path, "busy", 10)
    fake_env(tmp_path, "spared", 9)
    fake_env(tmp_path, "recent", RECENT / HOUR / 2)
    env = Environment(EnvSpec(TvmSource(version="busy")), busy)
    with env.in_use():  # a reproducer runs in it (another process would hold the same lock)
        pruned = prune(tmp_path, keep=0, spare=[tmp_path / "tvm-spared"])
    assert [e.name for e in pruned.busy] == ["tvm-busy", "tvm-recent"] and pruned.removed == []
    assert names(tmp_path) == ["tvm-busy", "tvm-spared", "tvm-recent"]
    assert [e.name for e in prune(tmp_path, keep=0).removed] == ["tvm-busy", "tvm-spared"]


def test_a_new_environment_prunes_the_least_recently_used_down_to_the_bound(tmp_path: Path) -> None:
    root = tmp_path / "envs"
    fake_env(root, "oldest", 30, mib=3)
    fake_env(root, "older", 20, mib=3)
    fake_tvm(tmp_path / "wheels", "0.0.1")
    offline = ("--no-index", "--find-links", str(tmp_path / "wheels"))
    spec = EnvSpec(TvmSource(version="0.0.1"))
    made, pruned = ensure_bounded(spec, root, offline, max_gb=1 / (1 << 30))  # a bound below any environment
    assert made.created and pruned is not None and pruned.busy == []
    assert [e.name for e in pruned.removed] == ["tvm-oldest", "tvm-older"]  # least recently used first
    assert names(root) == [spec.name]  # the one just made stays, whatever the bound
    os.utime(made.path / MARKER, (time.time() - 10 * HOUR,) * 2)
    again, none = ensure_bounded(spec, root, offline, max_gb=1 / (1 << 30))
    assert again.path == made.path and not again.created and none is None  # a reused one prunes nothing...
    assert time.time() - (made.path / MARKER).stat().st_mtime < 60  # ... and is marked used
    assert ensure_bounded(spec, root, offline, max_gb=0)[1] is None


def test_envs_list_and_prune_from_the_command_line(tmp_path: Path) -> None:
    root = tmp_path / "envs"
    for n, hours in enumerate((30, 20, 10)):
        fake_env(root, f"e{n}", hours)
    config = tmp_path / "c.yaml"
    config.write_text(f"reproducers:\n  venvs: {root}\n  venvs_max_gb: 0\n")
    listed = CliRunner().invoke(main, ["envs", "list", "--config", str(config)], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    rows = [line for line in listed.stdout.splitlines() if "tvm-e" in line]
    assert [r.split()[1] for r in rows] == ["tvm-e2", "tvm-e1", "tvm-e0"] and "no bound" in listed.stdout
    pruned = CliRunner().invoke(main, ["envs", "prune", "--keep", "1", "--config", str(config)])
    assert pruned.exit_code == 0, pruned.output
    assert pruned.stdout.splitlines()[-1].startswith(f"{root}: 2 removed") and names(root) == ["tvm-e2"]


def test_a_negative_bound_is_refused_naming_the_field(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("reproducers:\n  venvs_max_gb: -1\n")
    res = CliRunner().invoke(main, ["envs", "list", "--config", str(config)])
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert "reproducers.venvs_max_gb" in res.stderr and "must be a finite number of GiB >= 0" in res.stderr
