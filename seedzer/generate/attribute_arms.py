"""The attribute choices a campaign's generation epochs learn, beside the operators: each model of a
later epoch is made with its own value of every *attribute* (a generation setting the hand-written
heuristics choose once for a whole pool), drawn with the epoch's learned weights.

Attributes and their values, each a change of the heuristic's generation options:

- ``nodes``: ``fewer`` (half the heuristic's ``max_nodes``, at least 2), ``as-given``, ``more``
  (twice, at most 100): the size of the model (the small and big heuristics' choice);
- ``kernel``: ``any``, ``1``, ``3``, ``5-7`` (5 or 7): every convolution's kernel size (the conv
  heuristics' choice; NNSmith solves it under z3 like the rest), offered only when the heuristic constrains none;
- ``edges``: ``off``, ``ends``: operator attributes pinned to the ends of their ranges (strides, pads,
  kernels, slice bounds...) and broadcasting operands of lower rank, where z3 can satisfy it (the
  edge heuristic's biases, :class:`~seedzer.generate.options.EdgeOptions`), offered only when the
  heuristic sets no edge bias.

A model draws one value per attribute, with probability proportional to the value's weight
(:func:`choose`; a value without a learned weight weighs 1, so the first epoch draws uniformly), and
records the values in effect as ``attributes`` of its manifest entry (``nodes=more``, ``kernel=3``;
``kernel`` only when the model has a convolution, the only models it shapes). The bandit
(:mod:`seedzer.generate.bandit`) credits those labels as it credits operators.

Only this module knows the attributes; it imports neither NNSmith nor TVM
(:class:`VariedGenerator` imports NNSmith's adapter when it is made).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seedzer.generate.options import ConvOptions, EdgeOptions, GenerationOptions
from seedzer.protocols import GeneratedModel

Change = Callable[[GenerationOptions], GenerationOptions]
"""One attribute value: the heuristic's options made into the model's."""
EDGE_BIAS = 0.5
"""Probability of each edge bias of the ``edges=ends`` value (broadcast, attributes, unit dims)."""
MAX_NODES = 100
"""Largest ``max_nodes`` a ``nodes=more`` model gets (the options' own limit)."""


def _nodes(factor: float) -> Change:
    def change(opts: GenerationOptions) -> GenerationOptions:
        nodes = max(2, min(MAX_NODES, round(opts.max_nodes * factor)))
        low = min(opts.min_nodes, nodes) if opts.min_nodes is not None else None
        return dataclasses.replace(opts, max_nodes=nodes, min_nodes=low)
    return change


def _kernel(conv: ConvOptions) -> Change:
    return lambda opts: dataclasses.replace(opts, conv=conv)


def _same(opts: GenerationOptions) -> GenerationOptions:
    return opts


def _edges(opts: GenerationOptions) -> GenerationOptions:
    return dataclasses.replace(opts, edge=EdgeOptions(broadcast=EDGE_BIAS, attributes=EDGE_BIAS, unit_dims=EDGE_BIAS))


ARMS: dict[str, dict[str, Change]] = {
    "nodes": {"fewer": _nodes(0.5), "as-given": _same, "more": _nodes(2.0)},
    "kernel": {"any": _same, "1": _kernel(ConvOptions(kernel_sizes=(1,))), "3": _kernel(ConvOptions(kernel_sizes=(3,))),
               "5-7": _kernel(ConvOptions(kernel_sizes=(5, 7)))},
    "edges": {"off": _same, "ends": _edges},
}
"""Every attribute's values, in drawing order (the first is the heuristic's own choice)."""


def label(attribute: str, value: str) -> str:
    """How the bandit and the manifest name a value: ``attribute=value``."""
    return f"{attribute}={value}"


def applicable(base: GenerationOptions) -> dict[str, tuple[str, ...]]:
    """The attributes a heuristic's options leave open, with their values: none for a model-zoo pool;
    ``kernel`` only when the heuristic constrains no kernel, ``edges`` only when it sets no edge bias."""
    if base.source != "nnsmith":
        return {}
    closed = {"kernel"} if base.conv.constrained else set()
    if base.edge.active:
        closed.add("edges")
    return {name: tuple(values) for name, values in ARMS.items() if name not in closed}


def choose(base: GenerationOptions, weights: dict[str, float], rng: random.Random) -> dict[str, str]:
    """One value per open attribute (in :data:`ARMS` order), each with probability proportional to its
    weight (``weights`` by :func:`label`; 1 where none is learned; all weights 0: uniform)."""
    choice = {}
    for name, values in applicable(base).items():
        w = [max(0.0, float(weights.get(label(name, v), 1.0))) for v in values]
        choice[name] = rng.choices(values, weights=w)[0] if any(w) else rng.choice(values)
    return choice


def apply(base: GenerationOptions, choice: dict[str, str]) -> GenerationOptions:
    """The options of a model made with ``choice`` (values of :data:`ARMS`)."""
    opts = base
    for name, value in choice.items():
        opts = ARMS[name][value](opts)
    return opts


def in_effect(choice: dict[str, str], meta: dict[str, Any]) -> list[str]:
    """The labels of ``choice`` that shaped the model whose manifest facts are ``meta``: ``kernel``
    only when it has a convolution (``conv_kernels`` of its facts)."""
    return [label(name, value) for name, value in choice.items() if name != "kernel" or meta.get("conv_kernels")]


class VariedGenerator:
    """Makes each model with its own attribute values (see the module docstring): drawn from the
    attempt's seed, so a resumed epoch draws what it drew before; one NNSmith generator per distinct
    choice, made on first use. ``make(opts)`` builds a generator (NNSmith's by default)."""

    def __init__(self, base: GenerationOptions, weights: dict[str, float], cache_dir: Path,
                 make: Callable[[GenerationOptions], Any] | None = None) -> None:
        self.base, self.weights, self.cache_dir = base, dict(weights), cache_dir
        self.make = make or self._nnsmith
        self.generators: dict[tuple[tuple[str, str], ...], Any] = {}

    def _nnsmith(self, opts: GenerationOptions) -> Any:
        from seedzer.generate.nnsmith_adapter import NNSmithGenerator

        return NNSmithGenerator(opts, self.cache_dir)

    def generate(self, seed: int) -> GeneratedModel:
        """One model from ``seed`` with the values drawn for it, recorded in its manifest facts."""
        choice = choose(self.base, self.weights, random.Random(f"seedzer-attributes:{seed}"))
        key = tuple(choice.items())
        generator = self.generators.get(key)
        if generator is None:
            generator = self.generators[key] = self.make(apply(self.base, choice))
        model: GeneratedModel = generator.generate(seed)
        model.meta["attributes"] = in_effect(choice, model.meta)
        return model
