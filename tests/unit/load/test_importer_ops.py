"""The operators of TVM's importer, read from the installed TVM (seedzer.load.importer_ops)."""

from __future__ import annotations

from seedzer.load.importer_ops import importer_operators


def test_the_converter_map_is_read_at_run_time() -> None:
    ops = importer_operators()
    assert len(ops) > 100 and list(ops) == sorted(ops)
    assert {"Conv", "TopK", "LayerNormalization", "ScatterND", "SequenceAt"} <= set(ops)
    assert importer_operators() is ops  # asked once per process
