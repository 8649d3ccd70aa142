"""Pool statistics (seedzer.generate.stats): the importer's operators a pool's models carry."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from seedzer.generate.seed_pool import PoolWriter
from seedzer.generate.stats import pool_stats, render_stats
from tests.unit.generate.test_seed_pool import HEADER, tiny_model


def test_pool_stats_count_the_importers_operators_the_pool_carries(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER) as writer:
        writer.add_model(0, 1, tiny_model(1))
    stats = pool_stats(tmp_path / "p", importer=("Conv", "Relu", "TopK", "Unique"))
    assert stats["importer_operators"] == {"line": "importer operators in the pool 2 of 4 (50%)", "covered": 2,
                                           "of": 4, "missing": ["TopK", "Unique"]}
    console = Console(width=100, record=True)
    render_stats(stats, console)
    text = console.export_text()
    assert "2 of 4 (50%)" in text and "TopK, Unique" in text
