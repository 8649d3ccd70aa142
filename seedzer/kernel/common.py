"""Kernel basics shared by every test case: symptoms, stages, observations, exit statuses.

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
import traceback
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
"""The three programs of a case (see :mod:`seedzer.kernel.tir.observe`)."""


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
    SCHEDULE = "schedule"
    """A schedule primitive or MetaSchedule postprocessor of a ``sched`` case (:mod:`seedzer.kernel.sched`)."""

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
IMPORTER_LIMITS = ("not supported", "not currently supported", "not yet supported", "only supports",
                   "currently unsupported", "is unsupported", "not implemented", "must be a constant",
                   "for Relax frontend", "is deprecated in ONNX")
"""Fragments of the errors TVM's ONNX importer raises for what it says it does not support (an
operator, an attribute value, an input that is not a constant): a documented limitation of the
importer, an invalid test case, never a bug."""
IMPORTER_LIMIT = "unsupported by TVM's importer"
"""How the reason of a test case the importer refused by one of :data:`IMPORTER_LIMITS` starts (the class
``status --invalid`` counts it under, whatever exception type carried it)."""
SPECIAL_VALUES = "special-values"
"""A model built by TVM against onnxruntime and onnx.reference, which agree, on special input values
(NaN, infinities, signed zeros, extremes): the comparison and the oracle of such a mismatch."""


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
    frames: tuple[str, ...] = ()
    """TVM's frames of an error, innermost last (:func:`tvm_frames`): where in TVM it was raised."""

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
            "inner": self.inner, "seconds": self.seconds, **({"frames": list(self.frames)} if self.frames else {}),
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
            data.get("inner"), data.get("seconds"), tuple(str(f) for f in data.get("frames") or ()))


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception (TVM's messages carry the check that failed)."""
    return f"{type(exc).__name__}: {exc}"


MAX_FRAMES = 16
"""Most of an error's TVM frames an observation keeps (the innermost ones, and the innermost frame that
names the operator an importer was converting, wherever it is)."""
CONVERTING = " [converting "
"""How a frame of TVM's frontend names the operator it was converting: ``... [converting SequenceAt._impl_v11]``
(the converter method it called) or ``... [converting SkipLayerNormalization]`` (only the ONNX operator)."""


def _converting(frame: Any, where: str) -> str:
    """The operator a frame of TVM's frontend (``tvm/relax/frontend/``) was converting, read off its locals
    (the importer's per-node loop holds ``op_name``, its dispatch also ``op_function``), as a suffix."""
    if not where.startswith("tvm/relax/frontend/"):
        return ""
    names = frame.f_locals
    function, op = names.get("op_function"), names.get("op_name")
    qualname = getattr(function, "__qualname__", None)
    if isinstance(qualname, str):
        return f"{CONVERTING}{qualname}]"
    return f"{CONVERTING}{op}]" if isinstance(op, str) else ""


def tvm_frames(exc: BaseException) -> tuple[str, ...]:
    """TVM's frames of an exception's traceback, innermost last: its Python modules' (``tvm/...py``)
    and its C++ functions' (``tvm::...``, which TVM's FFI adds to the traceback), each as
    ``function (file:line)`` with the file relative to TVM's package or source tree. A Python function is
    named with its class (``SequenceAt._impl_v11``, where Python knows it), and a frontend frame with the
    operator it was converting (:data:`CONVERTING`)."""
    frames = []
    converting = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        code = frame.f_code
        path, name = code.co_filename.replace("\\", "/"), code.co_name or ""
        where = path.rsplit("site-packages/", 1)[-1] if "site-packages/tvm/" in path else \
            path.split("/project/", 1)[-1] if "/project/src/" in path else ""
        qualname = getattr(code, "co_qualname", name)  # Python 3.11+; a code object made by exec may lie
        if where.endswith(".py") and isinstance(qualname, str) and qualname.rsplit(".", 1)[-1] == name:
            name = qualname
        if where or "tvm::" in name:
            suffix = _converting(frame, where)
            frames.append(f"{name} ({where}:{lineno})" if where else name)
            if suffix:
                frames[-1] += suffix
                converting = frames[-1]
    kept = frames[-MAX_FRAMES:]
    if converting is not None and converting not in kept:
        kept = [converting, *kept[1:]]
    return tuple(kept)
