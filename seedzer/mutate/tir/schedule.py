"""Tzer's mutation schedule for one joint seed (IR and pass sequence).

:func:`choose_mutated_part` is Tzer's tolerance schedule: by a seed's count of consecutive
unproductive mutations it mutates the IR, the pass sequence, or both. :class:`TzerSchedule` applies
it: the IR mutators through :func:`seedzer.mutate.tir.driver.mutate_ir`, then (for a pass-side choice, a
failed IR mutation or an empty sequence) one weighted pass-sequence mutator. The random draws come
in a fixed order: the choice, the IR mutation, the pass mutator and its mutation.

Importing the module is TVM-free; mutating IR imports TVM.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from seedzer.mutate.weighted import pick
from seedzer.protocols import IRMutator, PassMutator
from seedzer.seed import PassSpec

if TYPE_CHECKING:
    from seedzer.mutate.tir.driver import MutationStats

MutatedPart = Literal["ir", "passes", "both"]


def choose_mutated_part(
    failures: int,
    tolerance: int,
    rng: random.Random,
    pass_tolerance: int = 1,
    both_probability: float = 0.1,
) -> MutatedPart:
    """Tzer's tolerance schedule over a seed's count of consecutive unproductive mutations.

    Mutate the IR until ``tolerance`` consecutive mutations brought nothing new, then the pass
    sequence for ``pass_tolerance`` attempts, then start over (Tzer resets both counters at that
    point; here ``failures`` simply keeps counting and the schedule cycles). A pass-phase attempt
    mutates both IR and passes with ``both_probability``. The caller resets ``failures``
    (``JointSeed.failures``) to 0 whenever a mutant brings new coverage.
    """
    if tolerance <= 0:
        return "passes"
    phase = max(failures, 0) % (tolerance + max(pass_tolerance, 1))
    if phase < tolerance:
        return "ir"
    return "both" if rng.random() < both_probability else "passes"


class ScriptCache(Protocol):
    """Where the schedule finds the PrimFunc of a corpus entry's script and leaves its mutant's."""

    def get(self, script: str, parent: bool = False) -> Any:
        """The PrimFunc of ``script``; ``parent``: it is about to be mutated."""
        ...

    def put(self, script: str, func: Any) -> None:
        """Remember that ``script`` is the printed text of ``func``."""
        ...


@dataclass(frozen=True)
class Mutant:
    """A mutated joint seed: its script, its pass sequence and the mutators applied, in order."""

    script: str
    passes: list[PassSpec]
    applied: list[str]


@dataclass
class TzerSchedule:
    """Mutates joint seeds by Tzer's tolerance schedule with the given mutators.

    ``tolerance`` is the number of unproductive IR mutations before the pass phase, ``max_passes``
    the longest pass sequence kept, ``stats`` accumulates the IR mutators' counters.
    """

    tolerance: int
    max_passes: int
    ir_mutators: Sequence[IRMutator]
    pass_mutators: Sequence[PassMutator]
    stats: MutationStats

    def mutate(
        self,
        script: str,
        passes: list[PassSpec],
        failures: int,
        rng: random.Random,
        scripts: ScriptCache,
        other: list[PassSpec] | None = None,
        triggered: Collection[str] = (),
        factors: Mapping[str, float] | None = None,
    ) -> Mutant:
        """Mutate the IR of ``script``, the sequence ``passes``, or both (``other``: crossover partner;
        ``triggered``: the passes the entry triggered, which an inserted pass preferably is not;
        ``factors``: the campaign's allocation of the mutators' weights, by name, within Tzer's phases).

        ``failures`` is the seed's count of consecutive unproductive mutations. A mutant's PrimFunc is
        left in ``scripts`` under its printed text, so it is executed as is, without parsing it back.
        """
        part = choose_mutated_part(failures, self.tolerance, rng)
        applied: list[str] = []
        if part in ("ir", "both"):
            from seedzer.mutate.tir.driver import mutate_ir
            from seedzer.tvmio import script_of

            parent = scripts.get(script, parent=True)
            found = mutate_ir(parent, rng, self.ir_mutators, stats=self.stats, factors=factors)
            if found is not None:
                mutant, name = found
                script = script_of(mutant)
                scripts.put(script, mutant)
                applied.append(name)
        if part in ("passes", "both") or not applied or not passes:
            mutator = pick(self.pass_mutators, rng, factors)
            passes = mutator.mutate(passes, rng, other, triggered)[: self.max_passes]
            applied.append(mutator.name)
        return Mutant(script, passes, applied)
