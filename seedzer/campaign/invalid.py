"""Why test cases and pool models were invalid, as ``seedzer status --invalid`` (and ``--all``) shows it.

A test case turned away before the gate is counted by its level, the *class* of its reason
(:func:`invalid_class`: the reason's first clause, e.g. "onnxruntime cannot run the model",
"unsupported input type", "the Relax mutation made ill-formed IR"; for a precondition, the pattern
that fired; for a mutant out of bounds, the bound) and its pass, in campaign.db's
``filter_summary``, with the samples :mod:`seedzer.campaign.filtered` kept; a pool model that gave
no seed is listed with the first reason its loading gave (campaign.db's ``models``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable

from seedzer.console import SafeTable
from seedzer.kernel.messages import normalize
from seedzer.mutate.tir.bounds import PREFIX as BOUNDS_PREFIX
from seedzer.mutate.tir.bounds import bound_of
from seedzer.oracles.preconditions import precondition_pattern
from seedzer.store.reader import CampaignReader

NOT_SHOWN_RERUNS = ("", "passes")
"""Re-run outcomes the re-runs' table leaves out: none yet, and a re-run that passed."""
CLASS_CHARS = 80
"""Longest reason class kept (a class is a reason's first clause, not its details)."""
_CLAUSE = re.compile(r"^(.*?)(?:: |\s\(|$)")


def _precondition(rest: str) -> str:
    return f"precondition: {precondition_pattern(rest) or 'other'}"


def _bounds(rest: str) -> str:
    return f"bounds: {bound_of(BOUNDS_PREFIX + rest) or 'other'}"


REFINED: dict[str, Callable[[str], str]] = {"precondition": _precondition, "bounds": _bounds}
"""Classes split further by the rest of the reason: a precondition by the pattern that fired
(:data:`seedzer.oracles.preconditions.PRECONDITION_PATTERNS`), a mutant out of bounds by the bound."""


def invalid_class(message: str) -> str:
    """The class of an invalid test case's reason: its first line up to the first ``: `` or `` (``,
    numbers and names normalized (so one cause is one class), at most :data:`CLASS_CHARS` long;
    the classes of :data:`REFINED` name their pattern or bound too."""
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    found = _CLAUSE.match(first)
    clause = (found.group(1) if found else first).strip() or "(no reason given)"
    refine = REFINED.get(clause)
    if refine is not None:
        return refine(message.strip()[len(clause):].lstrip(": "))[:CLASS_CHARS]
    return normalize(clause)[:CLASS_CHARS]


def invalid_table(reader: CampaignReader) -> SafeTable | None:
    """Test cases the filters before the gate turned away (invalid or slow) by level, reason and pass,
    most frequent first, with the samples kept of each (``filtered/<name>``; ``seedzer replay`` runs
    one) and how their re-runs at the full limits ended (None when none is recorded; a row whose count
    is corrupt is left out, and the reader notes it)."""
    rows = reader.filter_counts()
    if not rows:
        return None
    samples: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for sample in reader.filter_samples():
        samples.setdefault((sample.level, sample.reason, sample.pass_name), []).append((sample.folder, sample.rerun))
    table = SafeTable(title="Test cases turned away before the gate, by reason (samples: filtered/<name>)")
    for col in ("level", "reason", "pass", "count", "samples", "re-runs at full limits"):
        table.add_column(col, overflow="fold")
    for row in rows:
        kept = samples.get((row.level, row.reason, row.pass_name), [])
        reruns = Counter(rerun for _, rerun in kept if rerun)
        table.add_row(row.level, row.reason, row.pass_name, str(row.count),
                      " ".join(folder for folder, _ in kept[:3]) + (f" (+{len(kept) - 3})" if len(kept) > 3 else ""),
                      ", ".join(f"{n} {outcome}" for outcome, n in sorted(reruns.items())))
    return table


def rerun_table(reader: CampaignReader) -> SafeTable | None:
    """Every re-run at the full limits that did not pass (a hang filed as a candidate, an allocation
    that fails again alone: a runaway allocation to look at, an error); None when there is none."""
    rows = [s for s in reader.filter_samples() if s.rerun not in NOT_SHOWN_RERUNS]
    if not rows:
        return None
    table = SafeTable(title="Re-runs at the full limits that did not pass")
    for col in ("sample", "level", "reason", "pass", "outcome", "detail"):
        table.add_column(col, overflow="fold")
    for s in rows:
        table.add_row(s.folder, s.level, s.reason, s.pass_name, s.rerun, s.rerun_detail)
    return table


def unloaded_models_table(reader: CampaignReader) -> SafeTable | None:
    """Pool models that gave no seed, each with the first reason its loading gave (None when every
    model gave seeds)."""
    rows = [(m.model, m.status, m.detail) for m in reader.models() if m.status != "ok"]
    if not rows:
        return None
    table = SafeTable(title="Pool models that gave no seed (never fuzzed; bugs among them are load findings)")
    for col in ("model", "symptom", "step", "reason"):
        table.add_column(col, overflow="fold")
    for model, status, detail in rows:
        try:
            observations = json.loads(detail).get("observations") or []
        except (ValueError, AttributeError):
            observations = []
        first = observations[0] if observations and isinstance(observations[0], dict) else {}
        again = "its load was killed from outside; --resume loads it again: " if status == "killed" else ""
        table.add_row(str(model), str(first.get("symptom", "?")), str(first.get("pass") or "-"),
                      again + str(first.get("message") or "no seeds")[:200])
    return table
