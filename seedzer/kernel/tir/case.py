"""The TIR level's case: a PrimFunc's TVMScript, its flat pass steps and the checks that judge it.

A :class:`Case` is what a TIR-level fuzz worker runs, what a ``tir`` finding's ``case.json`` holds and
what its ``repro.py`` carries as ``CASE``: the script, the flat :class:`Step` list (TVM's default
pipeline with the fuzzer's passes inserted, see :mod:`seedzer.passes.tir.contracts`), the input seed, the
build targets and the :class:`Checks` to make. The steps themselves run in :mod:`seedzer.kernel.tir.observe`;
this module holds only data, so the campaign process handles TIR cases without importing TVM.

Depends on the standard library and :mod:`seedzer.kernel.common` only (copied verbatim into repro.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from seedzer.kernel.common import Observation

# --- kernel code (everything below is copied verbatim into repro.py) ---
PIPELINE = "pipeline"
"""Role of a step that TVM's own default pipeline runs."""
FUZZED = "fuzzed"
"""Role of a step the fuzzer inserted into the pipeline."""


@dataclasses.dataclass(frozen=True)
class Step:
    """One pass of a flat step list: ``tirx.X`` / ``s_tir.X``, constructor arguments, PassContext config.

    ``role`` says whether TVM's default pipeline runs it (``pipeline``) or the fuzzer inserted it
    (``fuzzed``); ``optional`` marks pipeline passes a minimal-lowering build leaves out, or runs
    with the arguments ``minimal`` when it needs the pass to lower at all (e.g. vectorization off).
    """

    name: str
    args: dict[str, Any] = dataclasses.field(default_factory=dict)
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    role: str = PIPELINE
    optional: bool = False
    minimal: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {"pass": self.name, "args": dict(self.args), "config": dict(self.config), "role": self.role,
                "optional": self.optional, "minimal": self.minimal}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Step:
        """Inverse of :meth:`to_json`."""
        return Step(str(data["pass"]), dict(data.get("args") or {}), dict(data.get("config") or {}),
                    str(data.get("role", PIPELINE)), bool(data.get("optional", False)), data.get("minimal"))

    def minimized(self) -> Step | None:
        """The step in a minimal-lowering build: itself, its ``minimal`` form, or None (left out)."""
        if not self.optional:
            return self
        if self.minimal is None:
            return None
        return dataclasses.replace(self, args=dict(self.minimal), optional=False, minimal=None)

    def label(self) -> str:
        """Short human-readable form, e.g. ``tirx.UnrollLoop[auto_max_step=16]``."""
        items = [f"{k}={v!r}" for k, v in sorted(self.args.items())]
        for key, value in sorted(self.config.items()):
            if isinstance(value, dict):
                items.extend(f"{k}={v!r}" for k, v in sorted(value.items()))
            else:
                items.append(f"{key}={value!r}")
        return self.name + (f"[{', '.join(items)}]" if items else "")


def reference_steps(steps: Sequence[Step]) -> list[Step]:
    """The steps of the reference build: TVM's default pipeline without the fuzzed insertions."""
    return [s for s in steps if s.role == PIPELINE]


def minimal_steps(steps: Sequence[Step]) -> list[Step]:
    """The steps of the minimal-lowering build: the pipeline without its optional passes (or with
    their minimal form)."""
    return [m for s in steps if s.role == PIPELINE and (m := s.minimized()) is not None]


O0 = {"kind": "llvm", "opt-level": 0}
"""The result oracle's build target: LLVM at opt-level 0 (code generation dominates an iteration)."""
O3 = {"kind": "llvm", "opt-level": 3}
"""The performance oracle's build target."""


@dataclasses.dataclass(frozen=True)
class Checks:
    """What :func:`observe` looks for besides errors: ill-formed IR after each step, opt against
    reference, reference against minimal, and (costly, O3 builds and timing) a slowdown."""

    illformed: bool = True
    compare: bool = True
    pipeline: bool = True
    perf: bool = False
    pipeline_illformed: bool = False
    """Verify the IR after pipeline steps that run before any fuzzed step too (a verifier issue of
    TVM's own pipeline, such as LowerOpaqueBlock's pragma AttrStmt outside its loop)."""
    intended_pragmas: bool = False
    """Take a ``pragma_*`` AttrStmt outside its loop (LowerOpaqueBlock's intended output) as
    well-formed and verify the rest, unless ``pipeline_illformed`` (the fuzz workers set it; cases
    filed before it existed are verified strictly, as they were)."""
    judge_minimal: bool = False
    """Report a failure of the minimal lowering (TVM's mandatory pipeline on the program) as the failure
    it is, not as an ``invalid`` test case: the fuzz workers set it (a mutant's parent lowered, so the
    mutant made the failure) and the filing gate judges it (a bug only on a well-formed program
    without undefined behaviour). Cases filed before it existed keep the old reading."""

    def strict_verifier(self) -> bool:
        """Whether the verifier reports everything it sees (see ``intended_pragmas``)."""
        return self.pipeline_illformed or not self.intended_pragmas


@dataclasses.dataclass(frozen=True)
class Case:
    """One low-level test case with everything needed to run it and judge it."""

    script: str
    steps: tuple[Step, ...]
    input_seed: int
    target: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(O0))
    perf_target: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(O3))
    rtol: float = 1e-4
    atol: float = 1e-5
    checks: Checks = Checks()
    perf_factor: float = 2.0
    perf_repeats: int = 3
    timeout: float = 60.0
    max_elems: int = 1 << 22
    expected: Observation | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form (what ``case.json`` and a reproducer's ``CASE`` hold)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["steps"] = [s.to_json() for s in self.steps]
        data["checks"] = dataclasses.asdict(self.checks)
        data["expected"] = self.expected.to_json() if self.expected else None
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> Case:
        """Inverse of :meth:`to_json`."""
        data = dict(data)
        data["steps"] = tuple(Step.from_json(s) for s in data["steps"])
        data["checks"] = Checks(**data.get("checks", {}))
        data["expected"] = Observation.from_json(data["expected"]) if data.get("expected") else None
        known = {f.name for f in dataclasses.fields(Case)}
        return Case(**{k: v for k, v in data.items() if k in known})

    def with_steps(self, steps: Sequence[Step], script: str | None = None) -> Case:
        """The same case with other steps (and optionally another script)."""
        return dataclasses.replace(self, steps=tuple(steps), script=self.script if script is None else script)
