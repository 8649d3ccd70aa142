"""Where a result came from: the source commit (a real git checkout made here) and the machine."""

from __future__ import annotations

import subprocess
from dataclasses import asdict
from pathlib import Path

from seedzer.provenance import Machine, SourceCommit, machine, provenance, read_machine, read_source, source_commit


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_the_commit_of_a_checkout_and_whether_its_files_differ(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    head = _git(tmp_path, "rev-parse", "HEAD")
    clean = source_commit(tmp_path)
    assert clean == SourceCommit(head, False) and clean.label() == head[:7]
    (tmp_path / "new.txt").write_text("untracked files do not count\n")
    assert source_commit(tmp_path) == SourceCommit(head, False)
    (tmp_path / "a.py").write_text("x = 2\n")
    dirty = source_commit(tmp_path)
    assert dirty is not None and dirty.dirty and dirty.label() == head[:7] + "+dirty"


def test_a_directory_that_is_no_checkout_has_no_commit(tmp_path: Path) -> None:
    assert source_commit(tmp_path) is None


def test_the_machine_and_the_meta_round_trip() -> None:
    here = machine()
    assert here.cores >= 1 and here.memory_gib > 0 and here.python.count(".") == 2
    assert f"{here.cores} cores" in here.label()
    meta = {"seedzer": "x", **provenance()}
    assert read_machine(meta) == here
    assert read_source(meta) == source_commit()  # this test runs from a checkout or an installed package
    assert read_source({}) is None and read_machine({"machine": {"cores": "many"}}) is None
    assert read_machine({"machine": asdict(Machine("cpu", 4, 8.0, "Linux", "3.11.7"))}) == Machine(
        "cpu", 4, 8.0, "Linux", "3.11.7")
