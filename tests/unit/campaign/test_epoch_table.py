"""The epochs table of status and the summary (seedzer.campaign.epoch_table)."""

from __future__ import annotations

from rich.console import Console

from seedzer.campaign.epoch_table import epoch_table
from seedzer.store.epoch_rows import EpochRow


def test_no_epochs_no_table() -> None:
    assert epoch_table([]) is None


def test_each_epoch_shows_its_models_top_weights_and_what_it_ended_with() -> None:
    rows = [EpochRow(0, 0.0, made=6, loaded=5, coverage=1000, roots=1, ended=60.0),
            EpochRow(1, 60.0, {"Relu": 1.9, "Add": 0.2, "Conv2d": 1.1, "Mul": 1.0}, {"Gelu": 1.7}, made=6, loaded=2,
                     attribute_weights={"nodes=more": 1.4, "kernel=3": 0.9})]
    table = epoch_table(rows)
    assert table is not None
    console = Console(width=200, record=True)
    console.print(table)
    text = console.export_text()
    assert "(the pool given)" in text and "6/5" in text and "1000" in text
    assert "Relu 1.90, Conv2d 1.10, Mul 1.00; inserted: Gelu 1.70; attributes: nodes=more 1.40, kernel=3 0.90" \
        in text and "Add" not in text
    assert "1.0-" in text  # the running epoch: started, not ended
