"""A folder written complete or not at all (issue 45 row 5): a full disk part-way leaves no folder, no
empty folder and no staging folder; a folder already there is replaced whole. The full disk is an
``ENOSPC`` from the N-th file write."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from seedzer.errors import CampaignError
from seedzer.store import atomic
from seedzer.store.atomic import write_folder

FILES: dict[str, str | bytes] = {"a.txt": "a", "sub/b.bin": b"b", "meta.json": "{}"}


def full_disk_at(n: int, real: Callable[[Path, str | bytes], None]) -> Callable[[Path, str | bytes], None]:
    """A file write that fails like a full disk from its ``n``-th call on."""
    calls = [0]

    def write(path: Path, data: str | bytes) -> None:
        calls[0] += 1
        if calls[0] >= n:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    return write


def test_a_folder_is_written_whole_with_the_usual_mode(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "f" / "abc", FILES)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == sorted(FILES)
    assert (folder / "sub" / "b.bin").read_bytes() == b"b"
    assert oct(folder.stat().st_mode & 0o777) == oct(0o777 & ~_umask())
    assert [p.name for p in folder.parent.iterdir()] == ["abc"]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_full_disk_part_way_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Before: the files written so far (or an empty folder) stayed. After: no trace of the folder."""
    monkeypatch.setattr(atomic, "_write_file", full_disk_at(n, atomic._write_file))
    with pytest.raises(CampaignError, match=r"^\S*/f/abc: cannot write \(disk full\)$"):  # the folder, not its staging
        write_folder(tmp_path / "f" / "abc", FILES)
    assert list((tmp_path / "f").iterdir()) == []


def test_a_failed_rename_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "rename", refuse)
    with pytest.raises(CampaignError, match=r"/abc: cannot write \(disk full\)"):
        write_folder(tmp_path / "abc", FILES)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_already_there_is_replaced_whole_and_leftovers_go(tmp_path: Path) -> None:
    old = tmp_path / "abc"
    old.mkdir()
    (old / "stale.txt").write_text("from an interrupted writer")
    leftover = tmp_path / ".abc.x1y2.tmp"  # a writer killed before its rename
    leftover.mkdir()
    (leftover / "a.txt").write_text("half")
    (tmp_path / ".other.q.tmp").mkdir()  # another folder's staging is not ours to remove
    write_folder(old, FILES)
    assert not (old / "stale.txt").exists() and (old / "meta.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.q.tmp", "abc"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
