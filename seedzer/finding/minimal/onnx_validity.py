"""Whether an ONNX model is valid by the three judges a maintainer would ask: ONNX's checker (full check,
with shape inference), onnxruntime (it builds a session and runs the inputs) and ``onnx.reference`` (ONNX's
executable specification, where it implements every operator of the model). A model any of them refuses
never reaches TVM as a comparison; a bug report says what each one said. Needs onnx, onnxruntime, numpy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import onnx

OK = "ok"
"""What a judge that accepts the model says."""
NOT_IMPLEMENTED = "not implemented"
"""How ``onnx.reference``'s answer starts when it lacks an operator of the model (no verdict)."""


@dataclass(frozen=True)
class OnnxValidity:
    """Each judge's answer: :data:`OK`, ``refused: <why>`` or (``onnx.reference`` only)
    ``not implemented: <why>``."""

    checker: str
    onnxruntime: str
    reference: str

    @property
    def valid(self) -> bool:
        """No judge refuses the model."""
        return all(v == OK or v.startswith(NOT_IMPLEMENTED) for v in (self.checker, self.onnxruntime, self.reference))

    def to_json(self) -> dict[str, str]:
        """JSON-friendly form."""
        return asdict(self)


def _why(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {(lines[0] if lines else '')[:200]}"


def model_validity(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> OnnxValidity:
    """The three judges' answers on ``model`` with inputs ``feeds``."""
    try:
        onnx.checker.check_model(model, full_check=True)
        checker = OK
    except Exception as exc:  # the checker raises several types
        checker = f"refused: {_why(exc)}"
    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    used = {k: v for k, v in feeds.items() if k in names}
    try:
        import onnxruntime

        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        session.run(None, used)
        runtime = OK
    except Exception as exc:  # onnxruntime raises its own types
        runtime = f"refused: {_why(exc)}"
    try:
        from onnx.reference import ReferenceEvaluator

        ReferenceEvaluator(model).run(None, used)
        reference = OK
    except NotImplementedError as exc:
        reference = f"{NOT_IMPLEMENTED}: {_why(exc)}"
    except Exception as exc:  # the reference implementation raises many types
        text = str(exc)
        missing = "not implemented" in text.lower() or "no implementation" in text.lower()
        reference = f"{NOT_IMPLEMENTED if missing else 'refused'}: {_why(exc)}"
    return OnnxValidity(checker, runtime, reference)
