"""The Relax pass family: Relax passes and Relax IR mutations run before ``tvm.compile`` (TVM-free).

A graph test case's sequence is 0 to 24 steps, run in their order before ``tvm.compile``'s default
pipeline (the empty sequence is the default pipeline alone). A step's contract depends on the phases
the steps before it established (:mod:`seedzer.passes.graph.contracts`), so the mutators choose among
the edits that keep the whole sequence in contract; an insertion is one time in five a contiguous run
of one of TVM's own pipeline orders (it reaches phases one pass seldom does). Its mutators are named
``relax_insert``, ``relax_delete``, ``relax_repeat``, ``relax_swap``, ``relax_replace``,
``relax_options`` and ``relax_crossover``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from seedzer.passes.catalog import PassInfo
from seedzer.passes.family import ContextFree, SequenceRules
from seedzer.passes.graph.catalog import RELAX_CATALOG, RELAX_PASS_NAMES
from seedzer.passes.graph.contracts import PIPELINE_ORDERS, PREFIX, out_of_contract, placeable_relax
from seedzer.seed import PassSpec


class RelaxFamily(ContextFree):
    """The Relax pass family (see the module docstring)."""

    rules = SequenceRules(prefix="relax_", operations=("insert", "delete", "repeat", "swap", "replace", "options",
                                                       "crossover"), min_len=0, max_len=24, run_share=0.2)
    catalog: Mapping[str, PassInfo] = RELAX_CATALOG
    names: Sequence[str] = RELAX_PASS_NAMES

    def in_contract(self, items: Sequence[PassSpec]) -> bool:
        """Whether every step is in contract given the phases the steps before it established."""
        return not out_of_contract(items)

    def placeable(self, items: Sequence[PassSpec]) -> list[tuple[int, PassSpec]]:
        """The steps in contract at their position (:func:`seedzer.passes.graph.contracts.placeable_relax`)."""
        return placeable_relax(items)

    def run(self, rng: random.Random, room: int, fresh: Callable[[random.Random], PassSpec]) -> list[PassSpec]:
        """A contiguous run of one of TVM's pipeline orders (an insertion refuses one longer than ``room``)."""
        order = rng.choice([o for o in PIPELINE_ORDERS.values() if o])
        start = rng.randrange(len(order))
        return order[start:rng.randint(start + 1, len(order))]

    def partner(self, rng: random.Random) -> list[PassSpec]:
        """One of TVM's pipeline orders."""
        return list(rng.choice(list(PIPELINE_ORDERS.values())))

    def ran_as(self, name: str) -> str:
        """A Relax pass runs under its name without ``relax.`` (``FoldConstant``)."""
        return name.removeprefix(PREFIX)


RELAX_FAMILY = RelaxFamily()
"""The family the graph level's sequences belong to."""
