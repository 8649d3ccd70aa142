"""Kernel basics shared by every test case: symptoms, stages, flat steps, cases, observations.

The comparison of outputs is :mod:`seedzer.kernel.comparison`; what makes two error messages the
same failure is :mod:`seedzer.kernel.messages`.

Depends on the standard library and :mod:`seedzer.kernel.comparison` only. Everything below the
marker line is copied verbatim into every ``repro.py`` (see :mod:`seedzer.kernel`), so this module
must not import the rest of Seedzer and must run on any Python that TVM supports.
"""

from __future__ import annotations

import dataclasses
import enum
import faulthandler
from collections.abc import Sequence
from typing import Any

from seedzer.kernel.comparison import Difference

# --- kernel code (everything below is copied verbatim into repro.py) ---
EXIT_GONE = 0
"""Reproducer exit status: every step passed (the bug is gone)."""
EXIT_PRESENT = 1
"""Reproducer exit status: the expected failure happened (a crash dies by its signal instead)."""
EXIT_DIFFERENT = 2
"""Reproducer exit status: a different failure happened."""
EXIT_BROKEN = 3
"""Reproducer exit status: the environment is broken (an import failed); says nothing about the bug."""
PRESENT_LINE = "reproduced: the bug is present"
"""What a reproducer prints before it exits with :data:`EXIT_PRESENT`."""
GONE_LINE = "not reproduced:"
"""How the line a reproducer prints before it exits with :data:`EXIT_GONE` starts."""
HANG_LINE = "expecting a hang"
"""How the first line of a hang's reproducer starts (it then exits 1 when the hang outlives its limit)."""
OPT, REFERENCE, MINIMAL = "opt", "reference", "minimal"
"""The three programs of a case (see :mod:`seedzer.kernel.lowlevel`)."""


def step_label(name: str, program: str) -> str:
    """How a step is named in progress and crash reports: ``tirx.X`` in the optimized program,
    ``<reference>:tirx.X`` in the others."""
    return name if program == OPT else f"<{program}>:{name}"


def label_parts(label: str) -> tuple[str, str]:
    """The inverse of :func:`step_label`: ``(program, step)`` of a step label."""
    if label.startswith("<") and ">:" in label:
        program, name = label[1:].split(">:", 1)
        return program, name
    return OPT, label


class Symptom(str, enum.Enum):  # noqa: UP042 - reproducers also run on Pythons without StrEnum
    """What happened to a test case. ``ok`` and ``invalid`` are never findings."""

    OK = "ok"
    EXCEPTION = "exception"
    CRASH = "crash"
    HANG = "hang"
    MISMATCH = "mismatch"
    PERF = "perf"
    ILLFORMED = "illformed"
    INVALID = "invalid"

    def __str__(self) -> str:
        return self.value

    @property
    def is_bug(self) -> bool:
        """True for symptoms that may become findings."""
        return self not in (Symptom.OK, Symptom.INVALID)


class Stage(str, enum.Enum):  # noqa: UP042 - see Symptom
    """Where in the pipeline an observation happened."""

    LOAD = "load"
    MUTATE = "mutate"
    PASS = "pass"
    BUILD = "build"
    RUN = "run"
    COMPARE = "compare"

    def __str__(self) -> str:
        return self.value


def arm_watchdog(expected: Symptom, timeout: float) -> None:
    """Print every fatal signal's traceback; when a hang is expected, also give up (exit 1, "the
    hang is present") once ``timeout`` seconds pass. :func:`disarm_watchdog` cancels the limit."""
    faulthandler.enable()
    if expected is Symptom.HANG:
        print(f"{HANG_LINE}: giving up after {timeout:.0f} s (exit status 1)", flush=True)
        faulthandler.dump_traceback_later(timeout, exit=True)


def disarm_watchdog() -> None:
    """Cancel the hang limit of :func:`arm_watchdog`."""
    faulthandler.cancel_dump_traceback_later()


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


@dataclasses.dataclass(frozen=True)
class Slowdown:
    """A confirmed slowdown: every alternating timing of the optimized build exceeded ``factor``."""

    ratio: float
    ratios: tuple[float, ...]
    opt_seconds: float
    reference_seconds: float
    factor: float
    repeats: int

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        data = dataclasses.asdict(self)
        data["ratios"] = list(self.ratios)
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> Slowdown:
        """Inverse of :meth:`to_json`."""
        data = dict(data)
        data["ratios"] = tuple(data.get("ratios") or ())
        return Slowdown(**data)


OPT_VS_REFERENCE = "opt-vs-reference"
"""The fuzzed build against TVM's default pipeline on the same IR and inputs."""
REFERENCE_VS_MINIMAL = "reference-vs-minimal"
"""TVM's default pipeline against the minimal lowering (a default-pipeline miscompile)."""
MODEL_VS_ONNXRUNTIME = "model-vs-onnxruntime"
"""A whole model built by TVM against onnxruntime."""


@dataclasses.dataclass(frozen=True)
class Observation:
    """What one execution of a test case showed: the single record every executor returns.

    ``pass_name`` is the step (or loader step) running when it happened; ``step_index`` its
    position in the flat step list; ``comparison`` names the two builds a mismatch is between.
    """

    symptom: Symptom
    stage: Stage | None = None
    pass_name: str | None = None
    message: str = ""
    step_index: int | None = None
    signal: int | None = None
    comparison: str | None = None
    difference: Difference | None = None
    slowdown: Slowdown | None = None
    inner: str | None = None
    seconds: float | None = None

    @staticmethod
    def ok() -> Observation:
        """The observation of a clean execution."""
        return Observation(Symptom.OK)

    def where(self) -> str:
        """``stage/pass`` for messages."""
        return f"{self.stage.value if self.stage else '?'}/{self.pass_name or '-'}"

    def headline(self) -> str:
        """The one line that says what happened."""
        first = next((ln.strip() for ln in self.message.splitlines() if ln.strip()), "")
        if self.symptom is Symptom.OK and not first:
            return "ok (every step passes and the outputs agree)"
        return f"{self.symptom.value} at {self.where()}: {first[:300]}"

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form."""
        return {
            "symptom": self.symptom.value, "stage": self.stage.value if self.stage else None,
            "pass": self.pass_name, "message": self.message, "step_index": self.step_index,
            "signal": self.signal, "comparison": self.comparison,
            "difference": self.difference.to_json() if self.difference else None,
            "slowdown": self.slowdown.to_json() if self.slowdown else None,
            "inner": self.inner, "seconds": self.seconds,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Observation:
        """Inverse of :meth:`to_json`; also reads the ``pass_name`` spelling of older records."""
        stage = data.get("stage")
        return Observation(
            Symptom(data["symptom"]), Stage(stage) if stage else None,
            data.get("pass", data.get("pass_name")), str(data.get("message") or ""), data.get("step_index"),
            data.get("signal"), data.get("comparison"),
            Difference.from_json(data["difference"]) if data.get("difference") else None,
            Slowdown.from_json(data["slowdown"]) if data.get("slowdown") else None,
            data.get("inner"), data.get("seconds"))


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


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception (TVM's messages carry the check that failed)."""
    return f"{type(exc).__name__}: {exc}"
