"""The reduction predicate of a loader finding: loading a candidate gives the finding back.

A candidate is written to a scratch file and loaded by the campaign's own loader
(:class:`~seedzer.load.loader.OnnxLoader`, every attempt in a process forked from the zygote, so
a segfault or a hang of the importer is an outcome, not a dead reducer), with the options the
finding needs: the constant-folding retry when the finding came from the folded attempt, the
differential check when it happened at build, run or compare. The finding holds when one outcome
has the finding's signature (:func:`seedzer.oracles.signature.signature`, as the campaign files it)
and happened at the same step (a crash's signature alone does not say where). The campaign side
never imports TVM, and neither does this module.
"""

from __future__ import annotations

from pathlib import Path

import onnx

from seedzer.load.compare import INPUT_SEED
from seedzer.load.loader import LoadOptions, OnnxLoader
from seedzer.oracles.signature import signature
from seedzer.outcome import Outcome, Symptom
from seedzer.triage.onnx_graph import export

DIFFERENTIAL_STEPS = frozenset({"build", "run", "reference", "compare"})
"""Steps of a loader attempt that only run with the differential check on."""


def step_of(outcome: Outcome) -> str:
    """The attempt step a loader outcome happened in (``import`` when not recorded)."""
    return str(outcome.detail.get("step") or outcome.detail.get("substage") or "import")


def load_options(outcome: Outcome, timeout: float) -> LoadOptions:
    """Loader options under which ``outcome`` can happen again, each attempt limited to ``timeout`` s."""
    differential = outcome.symptom is Symptom.MISMATCH or step_of(outcome) in DIFFERENTIAL_STEPS
    return LoadOptions(
        differential=differential,
        fold=outcome.detail.get("attempt") == "folded",
        target=str(outcome.detail.get("target", "llvm")),
        input_seed=int(outcome.detail.get("input_seed", INPUT_SEED)),
        timeout=timeout,
    )


def same_finding(original: Outcome, got: Outcome) -> bool:
    """True when ``got`` is the finding ``original``: same signature, same step."""
    return signature(got) == signature(original) and step_of(got) == step_of(original)


class LoaderPredicate:
    """Callable on an ONNX model: does loading it reproduce ``outcome``? (see module doc)."""

    def __init__(self, outcome: Outcome, scratch: Path, timeout: float = 60.0) -> None:
        self.outcome = outcome
        self.scratch = Path(scratch)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.loader = OnnxLoader(load_options(outcome, timeout), isolate=True)
        self.last_match: Outcome | None = None

    def outcomes(self, model: onnx.ModelProto) -> list[Outcome]:
        """Every outcome of loading ``model`` as the campaign would."""
        path = self.scratch / "candidate.onnx"
        path.write_bytes(export(model))
        return list(self.loader.load(path).outcomes)

    def __call__(self, model: onnx.ModelProto) -> bool:
        """True when loading ``model`` gives an outcome that is the same finding; remembers that outcome."""
        for got in self.outcomes(model):
            if same_finding(self.outcome, got):
                self.last_match = got
                return True
        return False
