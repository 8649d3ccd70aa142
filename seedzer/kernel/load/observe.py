"""The load kernel: an ONNX model through TVM's importer, lowering, build and run, against onnxruntime.

A :class:`LoadCase` holds the model (embedded or a file beside ``repro.py``), its input specs and
how to check it. :func:`observe_all` runs its steps in order and returns every failure: ``import``
(``from_onnx``; an unsupported operator is ``invalid``; an error ends the case), ``legalize``
(``LegalizeOps``), ``fuse`` (the default pipeline's dispatch and legalization passes for the CPU
backend), each followed by a TVMScript round trip of every new PrimFunc (the scripts that parse back
are the fuzzer's seeds); then, for a differential case, ``build`` (``tvm.compile``; an error ends the
case), ``run`` (Relax VM), ``reference`` (onnxruntime, else ``onnx.reference``, else stored outputs)
and ``compare`` (:func:`seedzer.kernel.comparison.compare` with NNSmith's tolerances; a difference
from onnxruntime is ``invalid`` where ``onnx.reference`` sides with TVM or with neither on the differing
output, :func:`~seedzer.kernel.onnx.model.onnx_reference_verdict`, and where the specification defines
no result for the values reaching a node the output depends on, :mod:`seedzer.kernel.onnx.undefined`).
TVM's failures on a model onnxruntime refuses to run (with the case's inputs) are ``invalid``
(:func:`seedzer.kernel.onnx.runtime.refused`).

The campaign's loading attempts, the load gate, the reducer and every ``load`` finding's ``repro.py``
run these functions. Depends on tvm, onnx, onnxruntime, numpy, :mod:`seedzer.kernel.onnx.model` and
the shared kernel modules only (copied verbatim into repro.py).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import tvm
from tvm import relax

from seedzer.kernel.common import (
    EXIT_DIFFERENT,
    EXIT_GONE,
    EXIT_PRESENT,
    GONE_LINE,
    MODEL_VS_ONNXRUNTIME,
    PRESENT_LINE,
    Observation,
    Stage,
    Symptom,
    arm_watchdog,
    disarm_watchdog,
    error_text,
)
from seedzer.kernel.comparison import compare, named
from seedzer.kernel.messages import normalize, same_failure
from seedzer.kernel.onnx.model import (
    INPUT_SEED,
    TOLERANCES,
    Spec,
    Trace,
    build,
    describe,
    import_model,
    make_target,
    model_bytes,
    onnx_reference_verdict,
    output_names,
    random_inputs,
    reference_outputs,
    run,
)
from seedzer.kernel.onnx.runtime import JUDGED_SYMPTOMS, onnxruntime_refusal, refused
from seedzer.kernel.onnx.undefined import UNDEFINED_HERE, undefined_on_values

# --- kernel code (everything below is copied verbatim into repro.py) ---
DIFFERENTIAL_STEPS = frozenset({"build", "run", "reference", "compare"})
"""Steps that run only for a differential case."""


@dataclasses.dataclass(frozen=True)
class LoadCase:
    """One model with everything needed to load it, check it and judge it.

    ``model`` is the ONNX model in base64, else ``model_file`` names it (relative to the directory of
    the running script); ``reference`` is a reference ``.npz`` in base64 (``input:<name>`` arrays
    replace the random inputs they fit, ``output:<name>`` ones are the last-resort reference);
    ``target`` is a kind name or a target dict; without ``differential`` the case stops after fuse.
    """

    specs: tuple[Spec, ...]
    model: str | None = None
    model_file: str | None = None
    input_seed: int = INPUT_SEED
    target: Any = "llvm"
    differential: bool = True
    roundtrip: bool = True
    timeout: float = 300.0
    reference: str | None = None
    expected: Observation | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-friendly form (what ``case.json`` and a reproducer's ``CASE`` hold)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["specs"] = [[name, dtype, list(shape)] for name, dtype, shape in self.specs]
        data["expected"] = self.expected.to_json() if self.expected else None
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> LoadCase:
        """Inverse of :meth:`to_json` (unknown keys are ignored)."""
        known = {f.name for f in dataclasses.fields(LoadCase)}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["specs"] = tuple((str(n), str(d), tuple(int(x) for x in s)) for n, d, s in data["specs"])
        kwargs["expected"] = Observation.from_json(data["expected"]) if data.get("expected") else None
        return LoadCase(**kwargs)

    def with_model(self, data: bytes) -> LoadCase:
        """The same case with ``data`` embedded as its model."""
        return dataclasses.replace(self, model=base64.b64encode(data).decode(), model_file=None)


def reference_arrays(case: LoadCase) -> dict[str, np.ndarray]:
    """The arrays of the case's reference ``.npz`` (none without one)."""
    if not case.reference:
        return {}
    with np.load(io.BytesIO(base64.b64decode(case.reference)), allow_pickle=False) as npz:
        return {key: np.asarray(npz[key]) for key in npz.files}


def make_feeds(case: LoadCase, stored: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[Observation]]:
    """Random inputs, replaced by the reference inputs that fit; an ``invalid`` note per misfit."""
    feeds = random_inputs(case.specs, case.input_seed)
    notes = []
    for name, dtype, shape in case.specs:
        given = stored.get("input:" + name)
        if given is not None and tuple(given.shape) != tuple(shape):
            notes.append(Observation(Symptom.INVALID, Stage.LOAD, "reference", f"reference input {name!r} has "
                                     f"shape {tuple(given.shape)}, the model takes {tuple(shape)}"))
        elif given is not None:
            feeds[name] = given.astype(dtype, copy=False)
    return feeds, notes


def legalize(mod: Any) -> Any:
    """``relax.transform.LegalizeOps``: one PrimFunc per operator."""
    return relax.transform.LegalizeOps()(mod)


def fuse(mod: Any, target: Any = "llvm") -> Any:
    """The default pipeline's library dispatch and legalization passes (fusion included) for the
    CPU backend, stopping before dataflow lowering and VM code generation."""
    tgt, backend = make_target(target), relax.backend.cpu_generic
    with tgt:
        return tvm.transform.Sequential(backend.library_dispatch_passes(tgt) + backend.legalize_passes(tgt))(mod)


def round_trip(mod: Any, seen: set[str], check: bool = True) -> tuple[list[tuple[str, str]], list[str]]:
    """Every PrimFunc of ``mod`` not in ``seen`` (updated) as TVMScript named ``main``, by name, that
    parses back into a PrimFunc; and the error of each one that does not (``check`` off: no parsing)."""
    scripts: list[tuple[str, str]] = []
    failures: list[str] = []
    funcs = sorted((gv.name_hint, fn) for gv, fn in mod.functions.items() if isinstance(fn, tvm.tirx.PrimFunc))
    for name, func in funcs:
        script = str(func.with_attr("global_symbol", "main").script())
        if script in seen:
            continue
        seen.add(script)
        if check:
            try:
                parsed = tvm.script.from_source(script)
                if not isinstance(parsed, tvm.tirx.PrimFunc):
                    raise ValueError(f"the script defines a {type(parsed).__name__}, not a PrimFunc")
            except Exception as exc:  # the TVMScript parser raises many types
                failures.append(f"TVMScript does not parse back: {error_text(exc)}"[:4000])
                continue
        scripts.append((name, script))
    return scripts, failures


OnScripts = Callable[[str, bool, list[tuple[str, str]]], None]
"""Seed callback: ``(step, fused, [(name, TVMScript)])`` after legalize and after fuse."""


def observe_all(case: LoadCase, on_scripts: OnScripts | None = None, trace: Trace | None = None) -> list[Observation]:
    """Run the case's steps (see the module docstring) and return every failure, in step order.

    A crash kills the process and a hang never returns: callers bound them.
    """
    trace = trace if trace is not None else Trace()
    model = onnx.load_model_from_string(model_bytes(case))
    trace.model = model
    failures = _observe(case, model, on_scripts, trace)
    if not any(f.symptom in JUDGED_SYMPTOMS for f in failures):
        return failures
    refusal = onnxruntime_refusal(model, make_feeds(case, reference_arrays(case))[0])
    return [refused(failure, refusal) for failure in failures]


def _observe(case: LoadCase, model: onnx.ModelProto, on_scripts: OnScripts | None, trace: Trace) -> list[Observation]:
    """The case's steps on ``model``; every failure, before onnxruntime is asked about them."""
    mod = trace.call("import", import_model, model, case.specs)
    if isinstance(mod, Observation):
        return [mod]
    failures: list[Observation] = []
    seen: set[str] = set()
    for step, lower in (("legalize", legalize), ("fuse", lambda m: fuse(m, case.target))):
        got = trace.call(step, lambda: round_trip(lower(mod), seen, case.roundtrip))  # noqa: B023 - called at once
        if isinstance(got, Observation):
            failures.append(got)
            continue
        failures.extend(Observation(Symptom.EXCEPTION, Stage.LOAD, step, message) for message in got[1])
        if on_scripts is not None:
            on_scripts(step, step == "fuse", got[0])
    return failures + _differential(case, model, mod, trace) if case.differential else failures


def _differential(case: LoadCase, model: onnx.ModelProto, mod: Any, trace: Trace) -> list[Observation]:
    """Build, run, reference and compare; the failures."""
    executable = trace.call("build", build, mod, case.target)
    if isinstance(executable, Observation):
        return [executable]
    stored = reference_arrays(case)
    feeds, notes = make_feeds(case, stored)
    trace.notes.extend(notes)
    actual = trace.call("run", run, executable, case.specs, feeds)
    if isinstance(actual, Observation):
        return [actual]
    expected, engine, errors = trace.call("reference", reference_outputs, model, feeds, stored)
    if expected is None:
        trace.reached.remove("reference")
        failed = "; ".join(f"{k}: {v}" for k, v in errors.items())
        return [Observation(Symptom.INVALID, Stage.LOAD, "reference", f"no reference could run the model ({failed})")]
    if "onnxruntime" in errors:
        trace.notes.append(Observation(Symptom.INVALID, Stage.LOAD, "reference", f"onnxruntime cannot run the "
                                       f"model ({errors['onnxruntime']}); the reference is {engine}"))
    trace.reference = engine
    diff = named(trace.call("compare", compare, expected, actual, TOLERANCES), output_names(model))
    trace.matched = diff is None
    if diff is None:
        return []
    if diff.nonfinite_reference:
        return [Observation(Symptom.INVALID, Stage.COMPARE, "compare",
                            f"outputs differ only where the reference is NaN/Inf: {diff.describe()}")]
    if compare(actual, run(executable, case.specs, feeds), {}) is not None:
        return [Observation(Symptom.INVALID, Stage.COMPARE, "compare", "the TVM build is nondeterministic")]
    if engine == "onnxruntime":
        sided, side = trace.call("onnx-reference", onnx_reference_verdict, model, feeds, actual, expected, TOLERANCES,
                                 diff.output)
        if sided in ("tvm", "neither"):  # onnxruntime departs, or no two engines agree there
            return [Observation(Symptom.INVALID, Stage.COMPARE, "compare", f"{side}: {diff.describe()}")]
    undefined = trace.call("undefined", undefined_on_values, model, feeds, diff.output, stage=Stage.COMPARE)
    if isinstance(undefined, str):  # the specification defines no result for the values that reach it
        return [Observation(Symptom.INVALID, Stage.COMPARE, "compare", f"{UNDEFINED_HERE}: {undefined}: "
                            f"{diff.describe()}")]
    if engine == "onnxruntime":
        return [Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", f"{diff.describe()}; {side}",
                            comparison=MODEL_VS_ONNXRUNTIME, difference=diff)]
    return [Observation(Symptom.MISMATCH, Stage.COMPARE, "compare", diff.describe(), comparison=MODEL_VS_ONNXRUNTIME,
                        difference=diff)]


def same_load_failure(expected: Observation, observed: Observation) -> bool:
    """Whether ``observed`` is the loader failure ``expected`` describes: the same step and
    :func:`~seedzer.kernel.messages.same_failure` (an error's normalized message); a mismatch must
    also differ the same way (values, NaN or infinity positions, shapes, output count)."""
    if observed.pass_name != expected.pass_name or not same_failure(expected, observed):
        return False
    if expected.symptom is Symptom.INVALID:
        return normalize(observed.message) == normalize(expected.message)
    if expected.symptom is Symptom.MISMATCH and expected.difference and observed.difference:
        return expected.difference.reason.split(":")[0] == observed.difference.reason.split(":")[0]
    return True


def load_main(case_json: dict[str, Any]) -> int:
    """Reproduce a loader case: exit 1 while the expected failure happens (a crash dies by its signal, a
    hang exits 1 once it outlives ``timeout``), 0 once every step passes and the outputs agree, 2
    on a different failure."""
    case = LoadCase.from_json(case_json)
    expected = case.expected or Observation.ok()
    arm_watchdog(expected.symptom, case.timeout)
    start = time.monotonic()
    trace = Trace(on_step=lambda step: print(f"step {step}", flush=True))
    observed = observe_all(case, trace=trace)
    disarm_watchdog()
    print(f"expected: {describe(expected)}")
    for note in trace.notes:
        print(f"note: {describe(note)}")
    for failure in observed:
        print(f"observed: {describe(failure)}")
    print(f"({time.monotonic() - start:.1f} s)")
    if any(same_load_failure(expected, failure) for failure in observed):
        print(PRESENT_LINE)
        return EXIT_PRESENT
    if not observed:
        agree = f" and the outputs agree with {trace.reference}" if case.differential else ""
        print(f"{GONE_LINE} every step passed{agree}")
        return EXIT_GONE
    print("a different failure")
    return EXIT_DIFFERENT


main = load_main
"""A load reproducer's entry point."""
