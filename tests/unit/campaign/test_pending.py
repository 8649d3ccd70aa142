"""The line of entries a campaign runs as they are (:mod:`seedzer.campaign.pending`)."""

from __future__ import annotations

from seedzer.campaign.pending import PendingSeeds
from seedzer.store.corpus import CorpusEntry


def entry(seed_id: str, origin: str = "m.onnx") -> CorpusEntry:
    return CorpusEntry(seed_id, f"script {seed_id}", "[]", origin, level="tir")


def test_first_come_first_served_and_a_dropped_seed_goes_first() -> None:
    line = PendingSeeds()
    a, b, c = entry("a"), entry("b"), entry("c")
    line.append(a)
    line.extend([b, a, c])  # a resumed corpus's unrun entries: those in line already are not added again
    assert list(line) == [a, b, c] and len(line) == 3 and b in line
    assert line.pop() is a
    line.put_back(a)  # it waited behind a test case whose worker died
    assert [line.pop(), line.pop(), line.pop(), line.pop()] == [a, b, c, None]
    assert not line


def test_a_quarantined_seed_leaves_the_line_whole() -> None:
    line = PendingSeeds()
    line.extend([entry("a"), entry("b"), entry("a", "other.onnx")])
    line.drop_seed("a")
    assert [e.seed_id for e in line] == ["b"]
