"""The ``generation.insert`` options of a heuristic: operators of TVM's importer inserted into every
generated model (:mod:`seedzer.generate.reach`), so a pool carries operators NNSmith alone cannot make.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class FieldContext(Protocol):
    """The options module's validation context of one field (its ``child`` and ``fail``)."""

    def child(self, name: str) -> FieldContext:
        """The context of a sub-field."""
        ...

    def fail(self, expected: str, got: Any) -> Exception:
        """The one-line error naming the field, what it expects and what it got."""
        ...


@dataclass(frozen=True)
class InsertOptions:
    """``operators``: insertions per generated model (0: off), each an operator of TVM's importer drawn
    from its schema and validated by the specification's engines, those the model lacks first;
    ``old_opsets``: the share of models made instead from a one-operator model at an opset older than
    NNSmith's (9 to 13), where the operators the specification removed since (``Scatter``,
    ``Upsample``) and the older versions of the others are reachable; ``weights``: a relative weight per
    importer operator (1 for one not named), set by a campaign's generation epochs
    (:mod:`seedzer.generate.bandit`), never by a heuristic file."""

    operators: int = 0
    old_opsets: float = 0.0
    weights: dict[str, float] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """True when models get insertions."""
        return self.operators > 0


def parse_insert(ctx: FieldContext, data: dict[str, Any]) -> InsertOptions:
    """Validate the ``generation.insert`` mapping (already checked for unknown keys)."""
    operators = data.get("operators", 0)
    if isinstance(operators, bool) or not isinstance(operators, int) or not 0 <= operators <= 32:
        raise ctx.child("operators").fail("an integer between 0 and 32", operators)
    share = data.get("old_opsets", 0.0)
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 <= share <= 1:
        raise ctx.child("old_opsets").fail("a probability between 0 and 1", share)
    if share and not operators:
        raise ctx.child("old_opsets").fail("0 while operators is 0 (no insertion)", share)
    return InsertOptions(int(operators), float(share))
