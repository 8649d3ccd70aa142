"""The code of every standalone loader ``repro.py``: needs only tvm, onnx, onnxruntime and numpy.

:func:`seedzer.triage.loader_repro.render_loader_repro` writes the finding's data (``CASE``), then
this file's text below the marker line, with the import of the loader's own
:func:`~seedzer.load.compare.random_inputs`, :func:`~seedzer.load.compare.compare_outputs` and
:func:`~seedzer.load.compare.onnxruntime_outputs` replaced by their source (same inputs, same
tolerances, same reference engine as the loader). The steps mirror the
loader's attempt (:mod:`seedzer.load.worker`): import with ``tvm.relax.frontend.onnx.from_onnx``,
``LegalizeOps`` and the default pipeline's fusion with a TVMScript round trip of every PrimFunc,
build, run, onnxruntime, compare.

A *case* is a JSON-able dict: ``model_b64`` (the model, base64) or ``model_file`` (a file beside
``repro.py``), ``specs`` (``[name, dtype, shape]`` of every graph input), ``input_seed``,
``target``, ``tolerances`` (dtype -> ``[rtol, atol]``), ``timeout`` (seconds a hang must exceed)
and ``expected`` (``{"symptom", "step", "key"}``, ``key`` being :func:`normalize` of the message).
Exit status: 1 while the expected failure happens (a crash kills the process by its signal),
0 when every step passes and the outputs agree, 3 when something else fails.
"""

# --- reproducer code (everything below is copied into repro.py) ---
import base64
import faulthandler
import os
import re
import sys
from typing import Any

import numpy as np
import onnx

from seedzer.load.compare import compare_outputs, onnxruntime_outputs, random_inputs  # repro.py: their source

NORMALIZE = (
    (r"0x[0-9a-fA-F]+", "A"),
    (r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`", "Q"),
    (r"\b([A-Za-z_]+)\d+(?:_\d+)*\b", r"\1N"),
    (r"[-+]?\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b", "N"),
    (r"\s+", " "),
)


def normalize(message: str) -> str:
    """The part of a message that names the failure: first line, before any ``;``, with addresses,
    quoted names, numbers and numbered names replaced."""
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    text = lines[0].split(";")[0] if lines else ""
    for pattern, repl in NORMALIZE:
        text = re.sub(pattern, repl, text)
    return text.strip()[:300]


def one_line(exc: BaseException) -> str:
    """``Type: first non-empty line of the message`` (the loader's form)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def load_model(case: dict[str, Any]) -> onnx.ModelProto:
    """The case's model: embedded (base64) or the file beside this script."""
    if case.get("model_b64"):
        return onnx.load_model_from_string(base64.b64decode(case["model_b64"]))
    here = os.path.dirname(os.path.abspath(sys.argv[0] or "."))
    return onnx.load(os.path.join(here, case["model_file"]))


def round_trip(mod: Any, seen: set[str]) -> list[str]:
    """Print every new PrimFunc of ``mod`` as TVMScript (named main) and parse it back; the failures."""
    import tvm

    failures = []
    funcs = sorted(
        ((gv.name_hint, fn) for gv, fn in mod.functions.items() if isinstance(fn, tvm.tirx.PrimFunc)),
        key=lambda item: item[0],
    )
    for _, func in funcs:
        script = str(func.with_attr("global_symbol", "main").script())
        if script in seen:
            continue
        seen.add(script)
        try:
            tvm.script.from_source(script)
        except Exception as exc:  # the parser raises many types
            failures.append(f"TVMScript does not parse back: {one_line(exc)}")
    return failures


def make_target(spec: str) -> Any:
    """A TVM target from a kind name or a JSON dict string."""
    import json

    import tvm

    return tvm.target.Target(json.loads(spec) if spec.lstrip().startswith("{") else spec)


def lower(mod: Any, target: str) -> list[tuple[str, str, str]]:
    """Legalize and fuse (default pipeline, CPU) with round trips; ``(step, symptom, message)`` failures."""
    import tvm
    from tvm import relax

    failures = []
    seen: set[str] = set()

    def fuse(m: Any) -> Any:
        tgt = make_target(target)
        backend = relax.backend.cpu_generic
        with tgt:
            return tvm.transform.Sequential(backend.library_dispatch_passes(tgt) + backend.legalize_passes(tgt))(m)

    for step, transform in (("legalize", relax.transform.LegalizeOps()), ("fuse", fuse)):
        try:
            lowered = transform(mod)
        except Exception as exc:  # any TVM error
            failures.append((step, "exception", one_line(exc)))
            continue
        failures.extend((step, "exception", msg) for msg in round_trip(lowered, seen))
    return failures


def flatten(value: Any) -> list[np.ndarray]:
    """VM results (a tensor or nested tuples of them) as a flat list of numpy arrays."""
    if hasattr(value, "numpy"):
        return [np.asarray(value.numpy())]
    if isinstance(value, (int, float, bool, np.generic)):
        return [np.asarray(value)]
    out: list[np.ndarray] = []
    for item in value:
        out.extend(flatten(item))
    return out


def reference(model: onnx.ModelProto, feeds: dict[str, Any]) -> list[np.ndarray]:
    """onnxruntime's outputs (CPU, graph optimizations off); ``onnx.reference`` if it cannot run."""
    try:
        return onnxruntime_outputs(model, feeds)
    except Exception:  # fall back to the pure-Python reference
        from onnx.reference import ReferenceEvaluator

        return [np.asarray(v) for v in ReferenceEvaluator(model).run(None, feeds)]


def observe(case: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Run every step on the case's model; the failures as ``(step, symptom, message)``."""
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    model = load_model(case)
    specs = [(str(n), str(d), [int(x) for x in s]) for n, d, s in case["specs"]]
    print(f"step import: from_onnx on {len(model.graph.node)} node(s): {[n.op_type for n in model.graph.node]}")
    try:
        mod = from_onnx(model, shape_dict={n: s for n, _, s in specs}, dtype_dict={n: d for n, d, _ in specs})
    except Exception as exc:  # the importer raises many types
        return [("import", "exception", one_line(exc))]
    print("step legalize/fuse: LegalizeOps, default pipeline fusion, TVMScript round trips")
    failures = lower(mod, case["target"])
    print("step build/run: tvm.compile and the Relax VM")
    try:
        executable = tvm.compile(mod, target=make_target(case["target"]))
    except Exception as exc:
        return [*failures, ("build", "exception", one_line(exc))]
    feeds = random_inputs(specs, int(case["input_seed"]))
    try:
        vm = relax.VirtualMachine(executable, tvm.cpu())
        actual = flatten(vm["main"](*[tvm.runtime.tensor(np.asarray(feeds[n], order="C")) for n, _, _ in specs]))
    except Exception as exc:
        return [*failures, ("run", "exception", one_line(exc))]
    print("step compare: against onnxruntime")
    try:
        expected = reference(model, feeds)
    except Exception as exc:
        return [*failures, ("reference", "invalid", one_line(exc))]
    tolerances = {k: tuple(v) for k, v in case["tolerances"].items()}
    problems = compare_outputs(expected, actual, tolerances)
    for line in problems:
        print("  MISMATCH", line)
    return [*failures, ("compare", "mismatch", problems[0])] if problems else failures


def main(case: dict[str, Any]) -> int:
    """Observe the case and compare with the expected failure; the exit status (see module doc)."""
    expected = case["expected"]
    if expected["symptom"] == "hang":
        faulthandler.dump_traceback_later(float(case["timeout"]), exit=True)  # exits with status 1
    failures = observe(case)
    hit = False
    for step, symptom, message in failures:
        same = (step, symptom) == (expected["step"], expected["symptom"]) and normalize(message) == expected["key"]
        hit = hit or same
        print(f"observed {symptom} at {step} ({'the expected failure' if same else 'another failure'}): {message}")
    if hit:
        print("BUG REPRODUCED")
        return 1
    if failures:
        print(f"error: not the expected {expected['symptom']} at {expected['step']}, but another failure")
        return 3
    print("not reproduced: every step passed and the outputs agree with onnxruntime")
    return 0
