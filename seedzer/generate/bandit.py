"""The bandit of a campaign's generation epochs: Thompson sampling over a Beta posterior per operator
and per attribute value (TVM-free, no NNSmith).

Every model a campaign fuzzed has a *reward* (what its lineage yielded: :mod:`seedzer.campaign.epoch_rewards`),
the *operators* it contains (its pool manifest's ``nnsmith_ops`` for NNSmith's operator choice,
``ops`` for the importer operators a ``reach``-like heuristic inserts) and the *attribute values* it was
made with (``attributes``: ``nodes=more``, ``kernel=3``...; :mod:`seedzer.generate.attribute_arms`),
each an arm of its own bandit (:data:`ARMS`). A model is a *success* when its
reward is above the median reward of the models of its own epoch (so half of an epoch's models at most
succeed, whatever the scale of the rewards, and a model that had less time, of a later epoch, is
compared with its peers only; an epoch whose models all tie teaches nothing but trials; a model alone
in its epoch so far has no peer and teaches nothing yet).
Each success adds 1 to ``alpha``, each failure 1 to ``beta``, of every distinct operator (attribute
value) the model contains (was made with), from the prior Beta(1, 1). The posterior is a pure
function of the outcomes, so a resumed campaign recomputes it instead of storing a running state.

The weights an epoch generates with are one Thompson draw per operator, scaled by 2 so that the
prior's mean (0.5) is weight 1, the weight of an operator no model has contained yet.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass

PRIOR = (1.0, 1.0)
"""Beta(alpha, beta) of an operator before any outcome: uniform."""
SCALE = 2.0
"""A draw's weight is ``SCALE`` times the draw: the prior's mean is weight 1 (an operator never seen)."""


@dataclass(frozen=True)
class ModelOutcome:
    """What one fuzzed model yielded: its name, epoch, operators (NNSmith's and ONNX's), reward and the
    attribute values it was made with (none for a model of the pool given)."""

    model: str
    epoch: int
    nnsmith_ops: tuple[str, ...]
    onnx_ops: tuple[str, ...]
    reward: float
    attributes: tuple[str, ...] = ()


ARMS: dict[str, Callable[[ModelOutcome], tuple[str, ...]]] = {
    "nnsmith": lambda o: o.nnsmith_ops,
    "onnx": lambda o: o.onnx_ops,
    "attributes": lambda o: o.attributes,
}
"""The bandits, by name: what of a model each credits (NNSmith's operators, ONNX's, attribute values)."""


@dataclass(frozen=True)
class Posterior:
    """Beta(alpha, beta) of one operator."""

    alpha: float
    beta: float

    @property
    def mean(self) -> float:
        """The posterior mean ``alpha / (alpha + beta)``."""
        return self.alpha / (self.alpha + self.beta)


def successes(outcomes: list[ModelOutcome]) -> dict[str, bool]:
    """Each model's success: its reward above the median reward of its epoch's models (models alone in
    their epoch are left out)."""
    by_epoch: dict[int, list[float]] = {}
    for o in outcomes:
        by_epoch.setdefault(o.epoch, []).append(o.reward)
    medians = {epoch: statistics.median(rewards) for epoch, rewards in by_epoch.items() if len(rewards) > 1}
    return {o.model: o.reward > medians[o.epoch] for o in outcomes if o.epoch in medians}


def posterior(outcomes: list[ModelOutcome], onnx: bool = False, arm: str | None = None) -> dict[str, Posterior]:
    """The Beta posterior of every operator the models contain (``onnx``: their ONNX operator types,
    else NNSmith's operators; ``arm`` names a bandit of :data:`ARMS` instead, e.g. ``attributes``), each
    model crediting every distinct operator (attribute value) once."""
    won = successes(outcomes)
    credited = ARMS[arm or ("onnx" if onnx else "nnsmith")]
    counts: dict[str, list[float]] = {}
    for o in outcomes:
        if o.model not in won:
            continue
        for op in set(credited(o)):
            a, b = counts.setdefault(op, list(PRIOR))
            counts[op] = [a + 1, b] if won[o.model] else [a, b + 1]
    return {op: Posterior(a, b) for op, (a, b) in sorted(counts.items())}


def thompson(post: dict[str, Posterior], rng: random.Random) -> dict[str, float]:
    """One Thompson draw per operator (in name order, so one ``rng`` seed gives one set of weights),
    times :data:`SCALE`."""
    return {op: round(SCALE * rng.betavariate(p.alpha, p.beta), 6) for op, p in sorted(post.items())}


def top_weights(weights: dict[str, float], n: int = 3) -> list[tuple[str, float]]:
    """The ``n`` most weighted operators, heaviest first (ties by name)."""
    return sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
