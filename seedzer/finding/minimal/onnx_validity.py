"""Whether an ONNX model is valid by the three judges a maintainer would ask: ONNX's checker (full check,
with shape inference), onnxruntime (it builds a session and runs the inputs) and ``onnx.reference`` (ONNX's
executable specification, where it implements every operator of the model). A model any of them refuses
never reaches TVM as a comparison; a bug report says what each one said. Each judge is asked by the one
validity check of :mod:`seedzer.kernel.onnx.validity` (the fuzzer's): this module only says its answers
judge by judge.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import onnx

from seedzer.kernel.onnx.validity import checker_refusal, reference_refusal, runtime_run

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


def _answer(refusal: str | None) -> str:
    """A judge's answer from the kernel's one-line refusal (``<judge> refuses the model: <why>``)."""
    return OK if refusal is None else f"refused: {refusal.split(': ', 1)[-1]}"


def model_validity(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> OnnxValidity:
    """The three judges' answers on ``model`` with inputs ``feeds``, each asked by the campaign's own
    validity check (:mod:`seedzer.kernel.onnx.validity`, on every node of the model), so a reduced
    model is judged exactly as the fuzzer judged its test case."""
    checker = _answer(checker_refusal(model))
    initializers = {t.name for t in model.graph.initializer}
    used = {k: v for k, v in feeds.items() if k in {i.name for i in model.graph.input} - initializers}
    run = runtime_run(model, used, None)
    if run.refusal is not None:
        return OnnxValidity(checker, _answer(run.refusal), f"{NOT_IMPLEMENTED}: onnxruntime gave no values")
    refusal, ran = reference_refusal(model, run, label=False)
    reference = _answer(refusal) if refusal is not None or ran else \
        f"{NOT_IMPLEMENTED}: an operator of the model (or no node to run)"
    return OnnxValidity(checker, OK, reference)
