"""The fidelity steps of an attempt: build, run, reference, compare (worker side, imports TVM)."""

from __future__ import annotations

from typing import Any

import numpy as np

from seedzer.load import differential
from seedzer.load.compare import TOLERANCES, compare_outputs, max_abs_error, random_inputs
from seedzer.load.onnx_import import InputSpec
from seedzer.load.refdata import RefData
from seedzer.load.worker import Attempt


def make_feeds(specs: list[InputSpec], ref: RefData, seed: int, st: Attempt) -> tuple[dict[str, np.ndarray], str]:
    """Inputs for the check: reference ``.npz`` inputs where they fit the model, seeded random otherwise.

    Returns the feeds and a description of their source (``npz:<file>``, ``random`` or ``mixed``).
    """
    feeds = random_inputs([s.as_tuple() for s in specs], seed)
    used = 0
    for spec in specs:
        given = ref.inputs.get(spec.name)
        if given is None:
            continue
        if tuple(given.shape) != spec.shape:
            st.fail(
                "invalid",
                "reference",
                f"reference input {spec.name!r} has shape {tuple(given.shape)}, the model takes {spec.shape}",
            )
            continue
        feeds[spec.name] = given.astype(spec.dtype, copy=False)
        used += 1
    if ref.path is None or used == 0:
        return feeds, "random"
    return feeds, f"npz:{ref.path.name}" if used == len(specs) else "mixed"


def differential_check(
    model: Any, mod: Any, specs: list[InputSpec], ref: RefData, options: dict[str, Any], st: Attempt
) -> None:
    """Build ``mod`` for llvm, run it, run the reference and compare; record findings in ``st``."""
    target = str(options.get("target", "llvm"))
    with st.step("build") as out:
        try:
            executable = differential.build(mod, target)
        except Exception as exc:  # TVM raises many types
            st.fail_exc("build", exc, out.getvalue())
            return
    st.done("build")
    seed = int(options.get("input_seed", 0))
    feeds, source = make_feeds(specs, ref, seed, st)
    with st.step("run") as out:
        try:
            actual = differential.run_vm(executable, specs, feeds)
        except Exception as exc:
            st.fail_exc("run", exc, out.getvalue())
            return
    st.done("run")
    with st.step("reference"):
        reference = differential.reference_outputs(model, feeds, ref.outputs)
    if "onnxruntime" in reference.errors:
        fallback = reference.engine or "none"
        st.fail(
            "invalid",
            "reference",
            f"onnxruntime cannot run the model: {reference.errors['onnxruntime']}",
            fallback=fallback,
        )
    if reference.outputs is None:
        errors = "; ".join(f"{k}: {v}" for k, v in reference.errors.items())
        st.fail("invalid", "reference", f"no reference could run the model ({errors})")
        return
    st.done("reference")
    st.data["reference"] = reference.engine
    with st.step("compare"):
        problems = compare_outputs(reference.outputs, actual, TOLERANCES)
        deterministic = True
        if problems:
            again = differential.run_vm(executable, specs, feeds)
            deterministic = not compare_outputs(actual, again, {})
    st.done("compare")
    st.data["matched"] = not problems
    if problems:
        st.fail(
            "mismatch",
            "compare",
            problems[0],
            problems=problems[:10],
            max_abs_error=max_abs_error(reference.outputs, actual),
            reference=reference.engine,
            inputs=source,
            ref_npz=ref.path.name if ref.path else None,
            input_seed=seed,
            specs=[list(s.as_tuple()) for s in specs],
            deterministic=deterministic,
            # Only integer/bool outputs differ while every float output agrees: often a comparison
            # or argmax that float rounding upstream tipped over (triage as a possible false alarm).
            discrete_only=all("elements differ" in p for p in problems),
            target=target,
        )
        if st.data["attempt"] == "folded":
            st.data["folded_model"] = model.SerializeToString()
