"""Where the ledger is."""

from __future__ import annotations

from pathlib import Path

from seedzer.ledger.location import ledger_path


def test_configured_then_beside_the_pool_then_in_the_pools_directory(tmp_path: Path) -> None:
    assert ledger_path(str(tmp_path / "mine.db"), tmp_path / "pools" / "basic", "seedpools") == tmp_path / "mine.db"
    assert ledger_path("", tmp_path / "pools" / "basic", "seedpools") == (tmp_path / "pools" / "ledger.db").resolve()
    assert ledger_path("", None, str(tmp_path / "seedpools")) == tmp_path / "seedpools" / "ledger.db"
