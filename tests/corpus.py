"""The audited regression corpus (``tests/fixtures/corpus``): findings judged by hand, as a TVM
maintainer would, with the verdict the filing gate must give them.

An entry is a folder:

- ``audit.json``: ``kind`` (``tir``, ``graph`` or ``load``; the entries written before the kinds were named
  after their levels say ``lowlevel`` or ``loader``, read as these), the expected ``verdict`` (``bug`` or
  ``not-a-bug``) and ``reason`` (the reason's first word: ``bug``, ``contract``, ``invalid``...),
  for a bug the ``culprit`` passes and ``bug`` (a name for the root cause: entries of one root cause
  must get one root signature, entries of two never share one), ``origin`` (where the finding came
  from), ``audit`` (what the auditor found: the plain ``tvm.compile`` reproduction of a genuine
  bug, or the rule that dismisses a false alarm) and, for a hang near the gate's limit, ``also``
  (other reasons its timing may give; the verdict is fixed).
- A TIR entry: ``ir.py`` (the TVMScript the fuzzer ran), ``case.json`` (the kernel case as
  filed, without its script), optionally ``legacy.json`` (the flat steps an older Seedzer ran) and
  ``seed.py``/``parent.py`` (the original seed's and the unmutated parent's IR).
- A load entry: the finding's ``meta.json``, ``model.onnx`` and (when it has one) ``case.json``,
  judged by the load gate.
- A graph entry: ``case.json`` (the graph case with its expected failure, its model mutations and
  Relax steps) and the seed model the mutations apply to (``seed.onnx``; ``model.onnx`` in entries
  of findings an older Seedzer filed, whose ``case.json`` names it), judged by the graph gate.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parent / "fixtures" / "corpus"
ANCESTOR_FILES = (("the original seed", "seed.py"), ("the unmutated parent", "parent.py"))


@dataclass
class Audit:
    """The hand-audited verdict of one corpus entry."""

    kind: str
    verdict: str
    reason: str
    origin: str
    audit: str
    culprit: list[str] = field(default_factory=list)
    bug: str | None = None
    also: list[str] = field(default_factory=list)
    """Other reasons the gate may give (only for hangs near the gate's limit: alone on a busy machine
    they outlive it and the next rule judges them, on an idle one they finish)."""

    @staticmethod
    def read(folder: Path) -> Audit:
        """The ``audit.json`` of ``folder``."""
        from seedzer.finding.meta import canonical_kind

        data = json.loads((folder / "audit.json").read_text())
        return Audit(**{**data, "kind": canonical_kind(data.get("kind"))})


def entries() -> list[Path]:
    """Every corpus entry folder, by name."""
    return sorted(p for p in CORPUS.iterdir() if (p / "audit.json").exists()) if CORPUS.exists() else []


def expects_hang(folder: Path) -> bool:
    """Whether the entry was filed as a hang (its gate run takes minutes)."""
    for name in ("case.json", "meta.json"):
        if (folder / name).exists():
            data = json.loads((folder / name).read_text())
            seen = data.get("expected") or data.get("observation") or data.get("outcome") or {}
            return bool(seen.get("symptom") == "hang")
    return False


def lowlevel_job(folder: Path) -> Any:
    """The gate job of a low-level entry, as the campaign or ``recheck`` would submit it."""
    from seedzer.finding.tir.gate import GateJob
    from seedzer.kernel.tir.case import Case, Step

    script = (folder / "ir.py").read_text()
    case = Case.from_json({**json.loads((folder / "case.json").read_text()), "script": script})
    legacy = None
    if (folder / "legacy.json").exists():
        steps = tuple(Step.from_json(s) for s in json.loads((folder / "legacy.json").read_text()))
        legacy = case.with_steps(steps)
    ancestors = [(label, (folder / name).read_text()) for label, name in ANCESTOR_FILES if (folder / name).exists()]
    return GateJob(folder.name, case, ancestors, legacy=legacy)


def write_lowlevel_entry(folder: Path, case: Any, legacy: Any, ancestors: list[tuple[str, str]],
                         audit: Audit) -> None:
    """Write a low-level entry (``case`` and ``legacy`` are kernel cases; see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=False)
    (folder / "ir.py").write_text(case.script)
    data = case.to_json()
    del data["script"]
    (folder / "case.json").write_text(json.dumps(data, indent=1) + "\n")
    if legacy is not None:
        (folder / "legacy.json").write_text(json.dumps([s.to_json() for s in legacy.steps], indent=1) + "\n")
    names = dict((label, name) for label, name in ANCESTOR_FILES)
    for label, script in ancestors:
        if script != case.script:
            (folder / names[label]).write_text(script)
    write_audit(folder, audit)


def write_loader_entry(folder: Path, finding: Path, audit: Audit) -> None:
    """Write a load or graph entry from its finding folder: its metadata, case and model (an older
    finding names its pool model by absolute path: that model is copied in, so the entry works on
    any machine; its ``repro.py`` is not kept, the load gate never reads it)."""
    folder.mkdir(parents=True, exist_ok=False)
    for name in ("meta.json", "case.json", "model.onnx", "seed.onnx"):
        if (finding / name).exists():
            shutil.copy(finding / name, folder / name)
    model = Path(str(json.loads((finding / "meta.json").read_text()).get("model") or ""))
    if not (folder / "model.onnx").exists() and model.suffix == ".onnx" and model.is_file():
        shutil.copy(model, folder / "model.onnx")
    write_audit(folder, audit)


def write_audit(folder: Path, audit: Audit) -> None:
    """Write ``audit.json``."""
    (folder / "audit.json").write_text(json.dumps(audit.__dict__, indent=1) + "\n")


def add_from_campaign(campaign: Path, signature: str, name: str, audit: Audit) -> Path:
    """Add the finding ``signature`` of ``campaign`` to the corpus as ``name``."""
    from seedzer.finding.meta import FindingMeta
    from seedzer.finding.recheck import ancestors
    from seedzer.finding.tir.folder import finding_case
    from seedzer.store.db import CampaignDB

    finding = campaign / "findings" / signature
    meta = FindingMeta.load(finding)
    folder = CORPUS / name
    if meta.kind in ("load", "graph"):  # a model finding: its files are the entry
        write_loader_entry(folder, finding, audit)
        return folder
    found = finding_case(finding, meta)
    db = CampaignDB(campaign / "campaign.db")
    try:
        parents = {r.id: r for r in db.corpus_rows()}
    finally:
        db.close()
    write_lowlevel_entry(folder, found.case, found.legacy, ancestors(campaign, meta.parent, parents), audit)
    return folder


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.corpus CAMPAIGN SIGNATURE NAME --verdict ... --reason ... --audit ...``"""
    import argparse

    p = argparse.ArgumentParser(description="Add an audited finding to the regression corpus.")
    p.add_argument("campaign", type=Path)
    p.add_argument("signature")
    p.add_argument("name")
    p.add_argument("--verdict", required=True, choices=("bug", "not-a-bug"))
    p.add_argument("--reason", required=True)
    p.add_argument("--audit", required=True)
    p.add_argument("--culprit", nargs="*", default=[])
    p.add_argument("--bug")
    p.add_argument("--origin")
    a = p.parse_args(argv)
    meta = json.loads((a.campaign / "findings" / a.signature / "meta.json").read_text())
    origin = a.origin or f"finding {a.signature} of {a.campaign.name}"
    audit = Audit(meta.get("kind", "lowlevel"), a.verdict, a.reason, origin, a.audit, a.culprit, a.bug)
    print(add_from_campaign(a.campaign, a.signature, a.name, audit))


if __name__ == "__main__":
    main()
