"""What a pass family's catalogue is made of: items with argument samplers and a sampling weight, and
the weighted draw of one (TVM-free).

Every family (:mod:`seedzer.passes.family`) lists its items as :class:`PassInfo` by name: the TIR passes
(:mod:`seedzer.passes.tir.catalog`), the Relax passes and IR mutations (:mod:`seedzer.passes.graph.catalog`).
An item's arguments are JSON values drawn by their samplers; where an argument goes when the kernel
applies the item (a constructor argument, a ``PassContext`` config field) is the family's business.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from seedzer.seed import PassSpec

Sampler = Callable[[random.Random], Any]
"""Draws one value of an argument."""


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a catalogue item: its name, its sampler, where it goes when it is no constructor
    argument (a ``PassContext`` config key, and a field of that config), and whether every sample
    carries it (``required``; an optional argument is drawn half of the time)."""

    name: str
    sample: Sampler
    config_key: str | None = None
    config_field: str | None = None
    required: bool = False


@dataclass(frozen=True)
class PassInfo:
    """One catalogue item: its full name (``"<namespace>.<Function>"``), its arguments and its sampling
    weight."""

    name: str
    args: tuple[ArgSpec, ...] = ()
    weight: float = 1.0

    @property
    def function(self) -> str:
        """The name after the namespace: the constructor in TVM's module (``"UnrollLoop"``)."""
        return self.name.split(".", 1)[1]

    def sample(self, rng: random.Random) -> PassSpec:
        """A PassSpec of this item with freshly sampled arguments (the optional ones each kept with
        probability 1/2)."""
        args = {a.name: a.sample(rng) for a in self.args if a.required or rng.random() < 0.5}
        return PassSpec(self.name, tuple(sorted(args.items())))


def catalog_of(names: Sequence[str], args: Mapping[str, tuple[ArgSpec, ...]],
               weight: Callable[[str], float]) -> dict[str, PassInfo]:
    """The catalogue of ``names``, in their order: each with its ``args`` (none when not listed) and its
    ``weight``."""
    return {name: PassInfo(name, args.get(name, ()), weight(name)) for name in names}


def choice(*values: Any) -> Sampler:
    """A sampler drawing one of ``values`` uniformly."""
    return lambda rng: rng.choice(values)


def coin(rng: random.Random) -> bool:
    """A fair boolean."""
    return rng.random() < 0.5


def draw(catalog: Mapping[str, PassInfo], names: Sequence[str], rng: random.Random) -> PassSpec:
    """One of the items ``names`` of ``catalog``, drawn by their weights, with sampled arguments."""
    pool = [catalog[n] for n in names]
    info = rng.choices(pool, weights=[p.weight for p in pool], k=1)[0]
    return info.sample(rng)
