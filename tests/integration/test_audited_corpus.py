"""The filing gate over the audited regression corpus (``tests/corpus.py``): every hand-audited
finding gets the verdict its audit gave it, a genuine bug names its culprit, and root signatures
group entries exactly as their audited root causes do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import Audit, entries, expects_hang, lowlevel_job

pytest.importorskip("tvm")

ENTRIES = entries()
SLOW = {f.name for f in ENTRIES if expects_hang(f)}
"""Entries filed as hangs: the gate re-runs them with a limit of minutes (run with ``-m slow``)."""
PARAMS = [pytest.param(f, id=f.name, marks=[pytest.mark.slow] if f.name in SLOW else []) for f in ENTRIES]
ROOTS: dict[str, tuple[str, str]] = {}
"""Root signature given by the gate -> (audited root-cause name, entry), filled as entries pass."""


def _verdict(folder: Path, audit: Audit) -> object:
    from seedzer.finding.graph.gate import run_graph_gate_on_folder
    from seedzer.finding.load.gate import run_load_gate_on_folder
    from seedzer.finding.tir.gate import run_gate

    judges = {"load": lambda: run_load_gate_on_folder(str(folder), timeout=120.0),
              "graph": lambda: run_graph_gate_on_folder(str(folder), timeout=120.0),
              "tir": lambda: run_gate(lowlevel_job(folder))}
    return judges[audit.kind]()


def test_the_corpus_is_big_and_mixed() -> None:
    audits = [Audit.read(f) for f in ENTRIES]
    assert len(audits) >= 30
    assert {a.verdict for a in audits} == {"bug", "not-a-bug"}
    assert {a.kind for a in audits} == {"tir", "graph", "load"}
    assert all(a.audit.strip() and a.origin.strip() for a in audits)
    assert all(a.bug and a.culprit for a in audits if a.verdict == "bug")


@pytest.mark.parametrize("folder", PARAMS)
def test_the_gate_agrees_with_the_audit(folder: Path) -> None:
    from seedzer.finding.verdict import reason_code

    audit = Audit.read(folder)
    got = _verdict(folder, audit)
    reason = "bug" if got.verdict == "bug" else reason_code(got.reason)  # type: ignore[attr-defined]
    assert got.verdict == audit.verdict, got.reason  # type: ignore[attr-defined]
    assert reason in (audit.reason, *audit.also), got.reason  # type: ignore[attr-defined]
    if audit.verdict != "bug":
        return
    assert set(audit.culprit) <= set(got.culprit), got.culprit  # type: ignore[attr-defined]
    root = got.root  # type: ignore[attr-defined]
    assert root, "a bug has a root signature"
    for other_root, (other_bug, other) in ROOTS.items():
        if other_bug == audit.bug:
            assert root == other_root, f"{folder.name} and {other} are one bug ({audit.bug}) but two roots"
        else:
            assert root != other_root, f"{folder.name} ({audit.bug}) and {other} ({other_bug}) share a root"
    ROOTS.setdefault(root, (str(audit.bug), folder.name))
