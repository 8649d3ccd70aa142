"""What a campaign exercised of TVM's ONNX importer: "importer operators exercised N of M", the
operators never exercised, and bugs (root causes) by operator (TVM-free, read-only).

An operator is exercised when a model holding it was handed to TVM's importer: a pool model the
campaign loaded (campaign.db's ``models``, read from the pool recorded in its meta) or a graph test
case's model (its ``onnx-op/<type>`` coverage features). A bug is counted under the operators its
root names: an insertion's or a spec-edge change's (culprit ``insert:TopK``, ``edge:Resize``), or the
operator whose output differed on special values (``inputs:special:Relu``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from seedzer.console import SafeTable
from seedzer.load.importer_ops import OPERATOR_FEATURE, OperatorReach, operators_of
from seedzer.store.reader import CampaignReader

NAMING_MUTATIONS = ("insert:", "edge:")
"""Culprit prefixes that name an operator (an insertion's, a spec-edge change's)."""
INPUT_MODE = "inputs:"
"""The prefix of an input mode's culprit, ``inputs:special:Relu:nan`` naming the operator whose output differed
(and the kind of value it got wrong)."""


class CulpritLine(Protocol):
    """What the table of bugs by operator reads of a finding (:class:`seedzer.campaign.summary.FindingLine`)."""

    culprit: list[str]


def model_operators(path: Path) -> set[str]:
    """The operator types of an ONNX model file (empty when it cannot be read)."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        model = onnx.load(str(path), load_external_data=False)
    except (OSError, DecodeError, ValueError):
        return set()
    return {node.op_type for node in model.graph.node}


def exercised_operators(reader: CampaignReader) -> set[str]:
    """Every operator type a campaign handed to TVM's importer: its graph cases' (features) and its
    loaded pool models' (when the pool is still where its meta says)."""
    found = operators_of(reader.features(OPERATOR_FEATURE))
    pool = reader.meta("pool")
    if isinstance(pool, str) and Path(pool).is_dir():
        for model in reader.models():
            found |= model_operators(Path(pool) / model.model)
    return found


def bug_operators(lines: Sequence[CulpritLine]) -> list[str]:
    """The operators a root names (its first finding's culprit), sorted."""
    first = lines[0] if lines else None
    culprits = first.culprit if first else []
    named = {c.split(":", 1)[1] for c in culprits if c.startswith(NAMING_MUTATIONS)}
    named |= {c.split(":")[2] for c in culprits if c.startswith(INPUT_MODE) and c.count(":") >= 2}
    return sorted(named - {"", "-", "?"})


def reach_table(reach: OperatorReach, title: str = "Importer operators") -> SafeTable:
    """The reach line and the operators never exercised."""
    table = SafeTable(title=title, show_header=False)
    table.add_column("what", style="bold")
    table.add_column("operators", overflow="fold")
    table.add_row("exercised", reach.summary())
    table.add_row("never exercised", ", ".join(reach.missing) or "none")
    return table


def operator_bug_table(bugs: Mapping[str, Sequence[CulpritLine]]) -> SafeTable:
    """Bugs (root causes) by the operator their root names, most first."""
    counts: Counter[str] = Counter(op for lines in bugs.values() for op in bug_operators(lines))
    unnamed = sum(1 for lines in bugs.values() if not bug_operators(lines))
    table = SafeTable(title="Bugs by operator (the operator an insertion or a spec-edge change named)")
    table.add_column("operator")
    table.add_column("bugs (root causes)", justify="right")
    for op, count in counts.most_common():
        table.add_row(op, str(count))
    if unnamed:
        table.add_row("(no operator named: a pass, a relation, a pool model)", str(unnamed))
    return table
