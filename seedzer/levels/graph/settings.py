"""The graph level's own settings (``levels.graph.*`` in the configuration). TVM-free: the
configuration reads them in the campaign process (:mod:`seedzer.config.levels`), a worker's graph
fuzzer uses them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from seedzer.config import WEIGHT, Check, setting


@dataclass
class GraphSettings:
    """How the graph level mutates a test case: the weight of each mutation strategy (0 turns it off),
    how many model mutations one test case may carry, and how its builds are made."""

    OLD_KEYS: ClassVar[dict[str, str]] = {"graph": ""}
    """The keys these settings had before the level had a section (the whole top-level ``graph``
    section; still read)."""

    passes: float = setting(3.0, "Weight of mutating the Relax step sequence (passes and Relax IR mutations).",
                            WEIGHT)
    uoc: float = setting(0.6, "Weight of adding an MT-DLComp universal obscure condition (UOC) with garbage nodes: "
                         "the model keeps its outputs for every input.", WEIGHT)
    pioc: float = setting(1.2, "Weight of adding a per-input obscure condition (PIOC): the model keeps its outputs "
                          "for the case's input.", WEIGHT)
    edge: float = setting(4.0, "Weight of a spec-edge change (an attribute or operand moved to a value the ONNX "
                          "specification allows and generators rarely choose): a new model, judged against "
                          "onnxruntime.", WEIGHT)
    insert: float = setting(4.0, "Weight of inserting a node of an operator TVM's ONNX importer converts (drawn from "
                            "its converter map, operators not yet exercised first), its attributes and inputs from "
                            "the operator's schema: a new model, judged against onnxruntime and onnx.reference.",
                            WEIGHT)
    special: float = setting(1.0, "Weight of switching a test case to special input values (NaN, +-Inf, -0, "
                             "denormals, extremes, index ends), judged by the specification (oracle "
                             "special-values).", WEIGHT)
    max_model_mutations: int = setting(8, "Most model mutations one test case carries (a mutant with more is not "
                                       "made).", Check("must be between 0 and 100", lambda v: 0 <= v <= 100))
    llvm_opt_level: int = setting(0, "LLVM opt-level of a test case's builds, fuzzed and reference alike (0-3). 0, as "
                                  "the TIR level's result oracle: LLVM's own IR optimization, no TVM code, is ~80% of "
                                  "a fresh tvm.compile (why this default: docs/measurements.md); 3 builds as "
                                  "tvm.compile's default does. A finding's reproducer uses tvm.compile's default "
                                  "target when it fails there too.",
                                  Check("must be 0, 1, 2 or 3", lambda v: 0 <= v <= 3))

    def weights(self) -> dict[str, float]:
        """Mutation strategy -> weight, of the strategies turned on."""
        return {k: w for k, w in (("passes", self.passes), ("uoc", self.uoc), ("pioc", self.pioc),
                                  ("edge", self.edge), ("insert", self.insert), ("special", self.special)) if w > 0}

    def conflict(self, where: str) -> str | None:
        """Why these settings cannot go together (every mutation strategy off), in one line; None when they can."""
        if not self.weights():
            return (f"field '{where}' turns every graph mutation off (give passes, uoc, pioc, edge, insert or special "
                    "a weight > 0)")
        return None
