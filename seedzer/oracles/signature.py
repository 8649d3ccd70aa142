"""Finding signatures: the deduplication keys of findings, one function for every kind of finding.

A *raw* key is what the campaign dedups occurrences by before the filing gate has judged them:
symptom, the pass the symptom surfaced at and its normalized message (for a mismatch or a slowdown
the fuzzed passes that changed the IR, since no culprit is known yet). A *root* key is what the
gate files a bug under: symptom, the culprit pass(es) found by bisection and the essence of the
symptom (the check that failed, the signal, the two builds that disagree), so one bug reached
through different seeds and passes is one finding and two causes never share one.
"""

from __future__ import annotations

import hashlib
import re
import signal
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from seedzer.kernel.common import MODEL_VS_ONNXRUNTIME, SPECIAL_VALUES, Observation, Symptom, label_parts
from seedzer.kernel.messages import normalize


@dataclass(frozen=True)
class SignatureKey:
    """The parts a signature hashes: kind of finding, symptom, where (culprit or pass), essence."""

    kind: str
    symptom: str
    where: tuple[str, ...]
    essence: str

    def digest(self) -> str:
        """The 12-hex-digit signature."""
        parts = [self.kind, self.symptom, "+".join(self.where), self.essence]
        return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:12]


PRINTER_NOTE = re.compile(r"\s*# Metadata omitted\. Use show_meta=True in script\(\) method to show it\.")
"""The line TVM's printer adds inside a printed expression that holds a constant (``R.split(metadata[..][0], ..)``):
it says how the expression was printed, not what failed."""


def _signal_name(signum: int | None) -> str:
    try:
        return signal.Signals(signum).name if signum else "signal"
    except ValueError:
        return f"signal {signum}"


def essence(observation: Observation, names: Iterable[str] = ()) -> str:
    """What identifies a symptom, independent of where it was reached: the normalized failing check
    (errors, ill-formed IR), the signal and top TVM frames (crashes), the phase that hung, or the
    two builds that disagree."""
    symptom, message = observation.symptom, PRINTER_NOTE.sub("", observation.message)
    if symptom is Symptom.EXCEPTION:
        return normalize(message, names)
    if symptom is Symptom.ILLFORMED:  # the verifier's first sentence; later ones add where it was defined
        return normalize(message, names).split(". ")[0].rstrip(".")
    if symptom is Symptom.CRASH:
        frames = [ln.strip()[3:] for ln in observation.message.splitlines() if ln.strip().startswith("at ")][:3]
        return " / ".join([_signal_name(observation.signal), *frames])
    if symptom is Symptom.HANG:
        return "kernel" if observation.stage is not None and observation.stage.value == "run" else "compile"
    if symptom is Symptom.MISMATCH:
        return observation.comparison or ""
    return ""


DTYPE = re.compile(r"\b(?:bool|u?int\d+|float\d+|bfloat\d+|float8_\w+)(?:x\d+)?\b")
"""A data type (``float32``, ``int64``, a vector ``float32x4``) in a normalized message."""
SHAPE = re.compile(r"[\[(]\s*N(?:\s*,\s*N)*\s*,?\s*[\])]")
"""A shape or an index list (``[N, N]``, ``(N,)``) once :func:`~seedzer.kernel.messages.normalize` made its
numbers ``N``."""
IR_CALL = re.compile(r"\b(?:R|T|I)\.[\w.]+\(")
"""The start of a printed IR expression in a message (``R.split(x, ...)``, ``R.Tensor((N, N), ...)``): its
operands name the input's values."""
IR_VALUE = re.compile(r"\b(expression|variable|var|value|tensor) [A-Za-z_]\w*")
"""A value of the IR named in a message (``expression lv has type``)."""
EXTERNAL = (SPECIAL_VALUES, MODEL_VS_ONNXRUNTIME)
"""The comparisons against an implementation outside TVM (onnxruntime, onnx.reference): a special value one of
them does not have is TVM's, whatever made it."""
VALUE_KINDS = {"nan positions": "nan", "inf positions": "inf"}
"""The kind of special value a difference is about (:func:`seedzer.kernel.comparison.compare`'s reasons)."""


def without_ir(text: str) -> str:
    """``text`` with every printed IR expression (:data:`IR_CALL`, to its closing parenthesis) made ``IR``
    and every IR value it names (:data:`IR_VALUE`) made ``ID``."""
    out, at = [], 0
    for found in IR_CALL.finditer(text):
        if found.start() < at:
            continue  # inside an expression already removed
        depth, end = 0, len(text)
        for i in range(found.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if depth == 0:
                end = i + 1
                break
        out.append(text[at:found.start()] + "IR")
        at = end
    return IR_VALUE.sub(lambda m: f"{m.group(1)} ID", "".join(out) + text[at:])


def root_essence(observation: Observation, names: Iterable[str] = ()) -> str:
    """What a root keys on: the :func:`essence` without what varies with the input it was reached by (data
    types, so that a pair named in either order is one; shapes and index lists; printed IR expressions and
    the IR's value names), and for a wrong result on special values the kind of value it gets wrong (a lost
    NaN and a wrong infinity are two defects). A NaN or infinity where onnxruntime has none is keyed alike
    whether special inputs brought it or an operator inside the model made it (a53 audit: ThresholdedRelu's
    NaN reached through special inputs and through an inserted Asin was two roots)."""
    text = SHAPE.sub("SHAPE", DTYPE.sub("DT", without_ir(essence(observation, names))))
    diff = observation.difference
    if diff is not None and observation.comparison in EXTERNAL and diff.at_operator in VALUE_KINDS:
        return f"{SPECIAL_VALUES}:{VALUE_KINDS[diff.at_operator]}"
    if observation.comparison == SPECIAL_VALUES and diff is not None:
        text += ":value"
    return text


def raw_key(kind: str, observation: Observation, names: Iterable[str] = (),
            changed_passes: Sequence[str] = ()) -> SignatureKey:
    """The key occurrences are grouped by before the gate (see the module docstring)."""
    where: tuple[str, ...] = (observation.pass_name or "",)
    if observation.symptom in (Symptom.MISMATCH, Symptom.PERF):
        where += tuple(sorted(set(changed_passes)))
    return SignatureKey(kind, observation.symptom.value, where, essence(observation, names))


CONVERTER_VERSION = re.compile(r"\._impl_v\d+$")
"""The version suffix of an ONNX converter's method (``relax.frontend.onnx.ReduceL2._impl_v18``)."""
SHARED = "component"
"""What a root in a shared component hashes as its kind: one bug, whichever kind of finding reached it."""


def component_key(observation: Observation, component: str, names: Iterable[str] = (),
                  keyed_on: str = "") -> SignatureKey:
    """The root of a failure raised in a shared component of TVM (the arithmetic analyzer, code
    generation, a TOPI operator...): the component and the essence of the symptom, whatever pass or
    kind of test case reached it, so one defect reached by several passes is one finding. ``keyed_on``
    replaces the essence when the code at fault's defect is not what the failure says (a converter whose
    ill-typed output another converter tripped on). A converter is keyed by its operator, not its version
    (:data:`CONVERTER_VERSION`): two versions failing the same way are one defect copied (the A/B audit of
    issue 57: ReduceL2's ``_impl_v13`` and ``_impl_v18`` taking the square root of an integer were two roots)."""
    where = CONVERTER_VERSION.sub("", component)
    return SignatureKey(SHARED, observation.symptom.value, (where,), keyed_on or root_essence(observation, names))


def root_key(kind: str, observation: Observation, culprit: Sequence[str], names: Iterable[str] = ()) -> SignatureKey:
    """The key the gate files a bug under: its culprit passes and the essence of its symptom.

    When an error or crash needs passes besides the one that failed, those passes made the IR it
    fails on: the failing pass is left out of the key (its check is in the essence), so that one
    pass's bad output failing the same check in two consumers (VectorizeLoop's boolean let, caught
    by InjectVirtualThread in the pipeline and by code generation when that pass ran before) is one bug.
    Ill-formed IR is keyed on the pass that emitted it from well-formed IR alone: the passes that
    made its (valid) input only lead there (StmtSimplify creating the let VectorizeLoop loses).
    """
    where = tuple(culprit)
    failing = label_parts(observation.pass_name or "")[1]
    if observation.symptom in (Symptom.EXCEPTION, Symptom.CRASH) and failing in where and len(where) > 1:
        where = tuple(c for c in where if c != failing)
    elif observation.symptom is Symptom.ILLFORMED and failing in where:
        where = (failing,)  # the verifier saw it take well-formed IR and emit ill-formed IR: its bug
    return SignatureKey(kind, observation.symptom.value, where, root_essence(observation, names))
