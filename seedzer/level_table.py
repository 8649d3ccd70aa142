"""The table of levels: every level a test case can live at, as plain data every layer may read.

A *level* is a kind of test case (docs/design.md §11): ``tir`` (a PrimFunc lowered from a pool model, with
a TIR pass sequence), ``graph`` (a pool model, with its mutations and a Relax pass sequence) and ``sched``
(a lowered PrimFunc with a schedule plan). Its
behaviour is an object of :mod:`seedzer.levels` (mutation, execution, seeds, what ``status`` shows);
this table holds only what the lower layers need without it: the name (also the name of the finding
kind that files its test cases), the weight the schedule draws it with by default, what it is (the
configuration reference), the suffix of its corpus files, where its object lives and where its own
settings section is (the configuration reads it from ``levels.<name>``, :mod:`seedzer.config.levels`).
Adding a level is one package of :mod:`seedzer.levels` plus one entry here (or a call of
:func:`register_level`).
"""

from __future__ import annotations

from dataclasses import dataclass

from seedzer.errors import SeedzerError


@dataclass(frozen=True)
class LevelEntry:
    """One registered level (see the module docstring)."""

    name: str
    target: str
    """``"module:attribute"`` of its :class:`seedzer.levels.level.Level` object (imported when used)."""
    weight: float
    """Its default weight in the schedule (``levels.<name>.weight``, or ``levels.<name>`` for short, in the
    configuration; 0 turns it off)."""
    doc: str
    """What a test case of the level is (one sentence, for the configuration reference)."""
    suffix: str
    """The suffix of a corpus entry's script file (``corpus/<id><suffix>``)."""
    settings: str = ""
    """``"module:Class"`` of the dataclass of its own settings (``levels.<name>.*`` in the configuration;
    imported when used, so TVM-free), empty for a level with none."""
    opt_in: bool = False
    """Off unless named (``--levels``, ``levels.<name>`` in the configuration), then at :attr:`weight`: a level
    not yet shown to run a campaign without false alarms."""

    @property
    def default_weight(self) -> float:
        """Its weight when the configuration does not name it (0 for an opt-in level)."""
        return 0.0 if self.opt_in else self.weight


LEVELS: dict[str, LevelEntry] = {
    "tir": LevelEntry("tir", "seedzer.levels.tir.level:LEVEL", 3.0,
                      "a lowered PrimFunc with a TIR pass sequence.", ".py", "seedzer.levels.tir.settings:TirSettings"),
    "graph": LevelEntry("graph", "seedzer.levels.graph.level:LEVEL", 1.0,
                        "a pool model with a Relax pass sequence, built whole.", ".graph.json",
                        "seedzer.levels.graph.settings:GraphSettings"),
    "sched": LevelEntry("sched", "seedzer.levels.sched.level:LEVEL", 2.0,
                        "a lowered PrimFunc with a schedule plan (tvm.s_tir.Schedule primitives, MetaSchedule's "
                        "design space and postprocessors), built and compared with the function unscheduled.",
                        ".sched.py", "seedzer.levels.sched.settings:SchedSettings", opt_in=True),
}
"""Level name -> its entry, in the order tables show levels."""


def register_level(entry: LevelEntry) -> None:
    """Add (or replace) a level."""
    LEVELS[entry.name] = entry


def level_names() -> tuple[str, ...]:
    """The registered levels' names, in table order."""
    return tuple(LEVELS)


def level_entry(name: str) -> LevelEntry:
    """The entry of level ``name``; an unknown one is a one-line error listing the levels."""
    found = LEVELS.get(name)
    if found is None:
        raise SeedzerError(f"no level '{name}' (levels: {', '.join(LEVELS)})")
    return found


def level_of_path(path: str) -> str:
    """The level of a corpus file recorded before entries carried their level: the level whose suffix
    its name ends with, the longest suffix first (``x.graph.json`` is a graph entry, ``x.py`` a TIR one)."""
    for entry in sorted(LEVELS.values(), key=lambda e: len(e.suffix), reverse=True):
        if path.endswith(entry.suffix):
            return entry.name
    raise SeedzerError(f"{path}: a corpus file of no level (suffixes: "
                       + ", ".join(e.suffix for e in LEVELS.values()) + ")")
