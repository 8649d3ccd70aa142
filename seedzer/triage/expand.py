"""Expanding a pass sequence into the flat list of passes :func:`apply_passes` really runs.

``apply_passes(mod, specs, repair=True)`` binds a target and, before each pass, runs the standard
lowering passes the pass needs (:func:`seedzer.mutate.stages.ensure`). A standalone reproducer
cannot carry that logic, so this module records every pass actually applied (repair passes
included, with constructor arguments and PassContext config) as a flat step list that plain
``tvm.tirx.transform.X(...)`` calls replay (:mod:`seedzer.triage.standalone`).

Run as ``python -m seedzer.triage.expand IR.py PASSES.json OUT.jsonl [TARGET_JSON]`` in a clean
process: each step is appended to ``OUT.jsonl`` (and flushed) *before* it runs, so a pass that
kills the process still leaves the prefix ending with the step that killed it; the last line is
``{"done": ...}`` when the whole sequence ran (or raised).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import tvm

from seedzer.mutate.pass_catalog import REQUIRED_ARG_DEFAULTS
from seedzer.mutate.passes import PASSES, instantiate
from seedzer.mutate.stages import ensure
from seedzer.seed import PassSpec, passes_from_json
from seedzer.tvmio import module_of, parse_primfunc

DEFAULT_TARGET: dict[str, Any] = {"kind": "llvm", "opt-level": 0}
"""The target the fuzzer binds passes to and builds with (see seedzer.mutate.stages.default_target)."""


def constructor_args(spec: PassSpec) -> dict[str, Any]:
    """The keyword arguments ``spec``'s pass constructor receives (config arguments excluded)."""
    info = PASSES[spec.name]
    ctor_names = {a.name for a in info.args if a.config_key is None}
    args = dict(REQUIRED_ARG_DEFAULTS.get(spec.name, {}))
    args.update({k: v for k, v in spec.args if k in ctor_names})
    return args


def step(name: str, args: dict[str, Any] | None = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """One flat step: a pass name, its constructor arguments and its PassContext config."""
    return {"pass": name, "args": dict(args or {}), "config": dict(config or {})}


@tvm.ir.instrument.pass_instrument
class RepairRecorder:
    """Records, before they run, the top-level passes :func:`ensure` applies (the repairs)."""

    def __init__(self, emit: Callable[[dict[str, Any]], None], target: dict[str, Any],
                 config: dict[str, Any]) -> None:
        self.emit = emit
        self.target = target
        self.config = config
        self.depth = 0

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Emit the pass (only top-level ones: nested passes are part of their parent)."""
        self.depth += 1
        if self.depth == 1:
            name = str(info.name)
            args = {"target": self.target} if name == "tirx.BindTarget" else {}
            self.emit(step(name, args, self.config))

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Leave the pass."""
        self.depth -= 1


def expand(script: str, specs: list[PassSpec], emit: Callable[[dict[str, Any]], None],
           target: dict[str, Any] | None = None) -> Any:
    """Apply ``specs`` exactly as ``apply_passes(..., repair=True)`` does, calling ``emit`` with
    each flat step before it runs; return the final module (a raising pass propagates)."""
    target = dict(target or DEFAULT_TARGET)
    tgt = tvm.target.Target(target)
    tgt = tgt.with_host(tgt)
    mod = module_of(parse_primfunc(script))
    rec = RepairRecorder(emit, target, {})
    with tvm.transform.PassContext(opt_level=3, instruments=[rec]):
        mod = ensure(mod, frozenset({"target"}), tgt)
    for spec in specs:
        p, config = instantiate(spec)
        rec = RepairRecorder(emit, target, config)
        with tvm.transform.PassContext(opt_level=3, config=config, instruments=[rec]), tgt:
            mod = ensure(mod, PASSES[spec.name].requires, tgt)
        emit(step(spec.name, constructor_args(spec), config))
        with tvm.transform.PassContext(opt_level=3, config=config), tgt:
            mod = p(mod)
    return mod


def main(argv: list[str]) -> int:
    """Command-line entry point (see the module docstring)."""
    ir_path, passes_path, out_path = argv[:3]
    target = json.loads(argv[3]) if len(argv) > 3 else None
    with open(ir_path) as f:
        script = f.read()
    with open(passes_path) as f:
        specs = passes_from_json(f.read())
    with open(out_path, "w") as out:

        def emit(s: dict[str, Any]) -> None:
            out.write(json.dumps(s, sort_keys=True) + "\n")
            out.flush()

        try:
            expand(script, specs, emit, target)
        except Exception as exc:
            emit({"done": "raised", "error": f"{type(exc).__name__}: {str(exc)[:2000]}"})
            return 0
        emit({"done": "ok"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
