"""NNSmith as an in-process library: set-up (export shim, op-support cache, patch registry), and
:class:`NNSmithGenerator`, which turns a seed into one valid ONNX model plus reference outputs.

Set-up facts (docs/design.md §3): torch's ``torch.onnx.export`` defaults to the dynamo exporter, which
fails on NNSmith's models, so a shim forces ``dynamo=False``; NNSmith caches its op-support table
under a directory computed at import (``nnsmith.narrow_spec.NNSMITH_CACHE_DIR``), which we point
at a directory the caller owns; its patch registry is global and accumulates, so it is reset for
every configuration. The op-support table is inferred op by op with retries, because NNSmith's own
inference aborts on the first op whose random z3 model breaks a sanity check.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import time
import warnings
from pathlib import Path
from typing import Any

import onnx

from seedzer.generate.errors import Rejected
from seedzer.generate.options import GenerationOptions
from seedzer.protocols import GeneratedModel

MAX_IR_VERSION = 10  # onnxruntime 1.31 reads IR <= 13 (onnx 1.23 writes 14); TVM's importer is older
TOPSET_RETRIES = 8
_NNSMITH_LOGGERS = ("mgen", "smt", "dtest", "core", "exec", "fuzz", "viz", "gen|torch", "gen|tf")


def install_export_shim() -> None:
    """Make ``torch.onnx.export`` default to the TorchScript exporter and keep it quiet. Idempotent."""
    import torch.onnx

    export = torch.onnx.export
    if getattr(export, "_seedzer_shim", False):
        return

    @functools.wraps(export)
    def shim(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("dynamo", False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return export(*args, **kwargs)

    shim._seedzer_shim = True  # type: ignore[attr-defined]
    torch.onnx.export = shim


def _raise_quietly(cls: Any, msg: str) -> None:
    from nnsmith.error import InternalError

    raise InternalError(msg)


def quiet_nnsmith() -> None:
    """Silence NNSmith's loggers and import-time warnings (pygraphviz) in this process.

    NNSmith's ``SanityCheck`` logs through ``logging.critical`` on the root logger, which also
    configures the root logger as a side effect; its handler is replaced by one that only raises.
    """
    for name in _NNSMITH_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", message="Install pygraphviz")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="torch.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from nnsmith.error import SanityCheck

    SanityCheck.handler = classmethod(_raise_quietly)


def _cache_subdir(cache_dir: Path) -> Path:
    import nnsmith
    import torch

    return cache_dir / f"nnsmith-{nnsmith.__version__}-torch{torch.__version__}-onnx{onnx.__version__}"


def _infer_topset(model_cls: Any) -> dict[str, Any]:
    """NNSmith's op-support inference, one op at a time, retrying ops whose random solve breaks."""
    import z3
    from nnsmith.narrow_spec import infer_topset_from_scratch

    topset: dict[str, Any] = {}
    state = random.getstate()
    try:
        for op in model_cls.operators():
            for attempt in range(TOPSET_RETRIES):
                random.seed(attempt)
                z3.set_param("smt.random_seed", attempt)
                try:
                    with contextlib.redirect_stdout(None):
                        topset.update(infer_topset_from_scratch(model_cls, None, op_types=[op]))
                    break
                except Exception:
                    continue
    finally:
        random.setstate(state)
    return topset


def prepare_nnsmith(cache_dir: Path) -> Any:
    """Shim, quiet, point NNSmith's cache at ``cache_dir`` and make sure the op table exists there.

    Returns NNSmith's ONNX model class. Safe to call repeatedly and from several processes (the
    table is written to a temporary file and renamed into place).
    """
    quiet_nnsmith()
    install_export_shim()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import nnsmith.narrow_spec as narrow_spec
        from nnsmith.materialize import Model

    model_cls = Model.init("onnx")
    model_cls.add_seed_setter()
    subdir = _cache_subdir(cache_dir)
    narrow_spec.NNSMITH_CACHE_DIR = str(subdir)
    path = subdir / (narrow_spec.get_cache_name(model_cls, None) + ".yaml")
    if path.is_file():
        try:  # a table missing most ops is poisoned (e.g. written by a broken exporter): rebuild it
            if len(narrow_spec.load_topset(str(path))) * 2 >= len(model_cls.operators()):
                return model_cls
        except Exception:  # an unreadable table is rebuilt too
            pass
    subdir.mkdir(parents=True, exist_ok=True)
    topset = _infer_topset(model_cls)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    narrow_spec.dump_topset(topset, str(tmp))
    os.replace(tmp, path)
    return model_cls


def reset_patch_registry() -> None:
    """Clear NNSmith's global, accumulating patch registry (activated ``requires`` patches)."""
    from nnsmith.abstract.extension import ACTIVATED_PATCH

    ACTIVATED_PATCH.clear()


def _matches(op: Any, names: tuple[str, ...]) -> bool:
    full = op.name()
    return full in names or full.split(".", 1)[-1] in names


def build_opset(model_cls: Any, opts: GenerationOptions) -> tuple[list[Any], list[float], list[Any]]:
    """The constrained op list for ``opts``, its sampling weights and the required op types."""
    from nnsmith.abstract.dtype import DType
    from nnsmith.narrow_spec import auto_opset

    from seedzer.generate.constraints import constrain_opset

    reset_patch_registry()
    allowed = {DType.from_str(d) for d in opts.dtypes}
    opset = []
    for op in auto_opset(model_cls, None):
        if opts.include_ops is not None and not _matches(op, opts.include_ops):
            continue
        if _matches(op, opts.exclude_ops):
            continue
        ins_ok = any(set(c) <= allowed for c in op.in_dtypes)
        outs_ok = any(set(c) <= allowed for c in op.out_dtypes)
        if ins_ok and outs_ok:
            opset.append(op)
    opset = constrain_opset(opset, opts.conv, opts.max_weight_elements)
    if not opset:
        raise Rejected("empty op set", "no NNSmith op matches the include/exclude/dtype options")
    weights = [next((w for n, w in opts.op_weights.items() if _matches(op, (n,))), 1.0) for op in opset]
    if not any(weights):
        raise Rejected("empty op set", "every op weight is zero")
    required = []
    for name in opts.require_ops:
        found = [op for op in opset if _matches(op, (name,))]
        if not found:
            raise Rejected("empty op set", f"required op {name} is not in the op set")
        required.append(found[0])
    return opset, weights, required


class NNSmithGenerator:
    """Makes one valid ONNX model from a seed under a heuristic's generation options.

    ``generate`` raises :class:`~seedzer.generate.errors.Rejected` with a countable reason when the
    attempt yields no usable model. The returned model's ``meta`` holds the manifest facts and,
    under ``reference_npz``, the bytes of the reference inputs/outputs file.
    """

    def __init__(self, opts: GenerationOptions, cache_dir: Path, *, torch_threads: int = 1) -> None:
        import torch

        self.opts = opts
        self.model_cls = prepare_nnsmith(cache_dir)
        self.opset, self.weights, self.required = build_opset(self.model_cls, opts)
        # Small tensors: one thread beats torch's default pool (and is fair to --jobs); by how much:
        # docs/measurements.md, 'Generation'.
        torch.set_num_threads(torch_threads)
        # The first optimizer imports torch._dynamo (seconds); pay it here, not in the first model.
        torch.optim.Adam([torch.zeros(1, requires_grad=True)])

    def _graph(self, seed: int, nodes: int) -> Any:
        from seedzer.generate.constraints import make_graph_generator

        o = self.opts
        extra: dict[str, Any] = {}
        if o.edge is not None and o.edge.active:  # NNSmith biased toward the spec's edges
            from seedzer.generate.edges import EdgeSymbolicGen

            extra = {"generator": EdgeSymbolicGen, "edge": o.edge}
        start = time.perf_counter()
        gen = make_graph_generator(
            self.opset,
            seed,
            weights=self.weights,
            required=self.required,
            max_nodes=nodes,
            method=o.method,
            timeout_ms=o.timeout_ms,
            **extra,
            max_elem_per_tensor=o.max_elem_per_tensor,
            rank_choices=list(o.rank_choices) if o.rank_choices else None,
            dtype_choices=list(o.dtypes),
        )
        if gen.ir.n_compute_inst() == 0 or gen.last_solution is None:
            out_of_time = time.perf_counter() - start >= o.timeout_ms / 1000
            reason = "z3 timeout" if out_of_time or gen.z3_unknown > gen.z3_unsat else "z3 unsat"
            raise Rejected(reason, f"no operator could be inserted ({gen.z3_unsat} unsat, {gen.z3_unknown} unknown)")
        missing = gen.missing_required()
        if missing:
            raise Rejected(f"missing required op {missing[0].name()}", f"after {gen.ir.n_compute_inst()} ops")
        return gen

    def generate(self, seed: int) -> GeneratedModel:
        """Generate, materialize, export, check and run one model from ``seed`` (with the heuristic's
        insertions, :mod:`seedzer.generate.reach`)."""
        from seedzer.generate.materialize import refine
        from seedzer.generate.reach import insert_operators, old_opset_pool_model, wants_old_opset

        start = time.perf_counter()
        old, reach_rng = wants_old_opset(self.opts.insert, seed)
        if old:
            scratch, feeds = old_opset_pool_model(self.opts.insert, reach_rng)
            return self._checked(scratch, feeds, {"nnsmith_seed": seed, "target_nodes": 0, "nnsmith_ops": []}, start)
        lo = self.opts.min_nodes or self.opts.max_nodes
        nodes = random.Random(seed).randint(lo, self.opts.max_nodes)
        gen = self._graph(seed, nodes)
        ir = gen.make_concrete()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = self.model_cls.from_gir(ir)
                refine(model)
                oracle = model.make_oracle()
        except Exception as exc:  # NNSmith/torch failures while materializing or exporting
            raise Rejected(
                f"export: {type(exc).__name__}", str(exc).splitlines()[0][:200] if str(exc) else ""
            ) from None
        proto: onnx.ModelProto = model.onnx_model
        proto.ir_version = min(proto.ir_version, MAX_IR_VERSION)
        if self.opts.edge.negative_axes:
            from seedzer.generate.onnx_edges import negate_axes

            negate_axes(proto, self.opts.edge.negative_axes, random.Random(seed))
        inputs = dict(oracle.input)
        if self.opts.insert.active:
            proto = insert_operators(proto, inputs, self.opts.insert.operators, reach_rng,
                                     learned=self.opts.insert.weights)
        nnsmith_ops = [type(i.iexpr.op).__name__ for i in ir.insts
                       if i.iexpr.op.__class__.__name__ not in ("Input", "Constant")]
        return self._checked(proto, inputs, {"nnsmith_seed": seed, "target_nodes": nodes, "nnsmith_ops": nnsmith_ops},
                             start)

    def _checked(self, proto: onnx.ModelProto, inputs: dict[str, Any], meta: dict[str, Any],
                 start: float) -> GeneratedModel:
        """The checks every generated model passes (opset, bounds, the heuristic's constraints, the
        specification's validity: onnx.checker's full check, onnxruntime and onnx.reference, the
        reference run) and its manifest facts."""
        from seedzer.generate.onnx_facts import constraint_violation, model_facts
        from seedzer.generate.reference import ReferenceFailure, all_finite, npz_bytes, reference_outputs
        from seedzer.kernel.onnx.validity import model_validity
        from seedzer.load.bounds import bounds_problem, opset_problem
        from seedzer.mutate.graph.insertion import reason_key

        data = proto.SerializeToString()
        unknown = opset_problem(proto)
        if unknown:
            raise Rejected("unknown opset", unknown)
        over = bounds_problem(proto)
        if over:
            raise Rejected("over limits", over)
        facts = model_facts(proto)
        violation = constraint_violation(facts, self.opts)
        if violation:
            raise Rejected(violation, str(facts["conv_kernels"]))
        refusal = model_validity(proto, inputs, isolate=True).refusal
        if refusal is not None:  # the specification's engines refuse it: never a pool model
            raise Rejected(reason_key(refusal), refusal)
        try:
            outputs, provider = reference_outputs(data, inputs)
        except ReferenceFailure as exc:
            raise Rejected(exc.reason, exc.detail) from None
        meta = {
            **meta,
            **facts,
            "reference_provider": provider,
            "finite": all_finite(outputs),
            "gen_seconds": round(time.perf_counter() - start, 4),
            "reference_npz": npz_bytes(inputs, outputs, provider),
        }
        return GeneratedModel(onnx_bytes=data, meta=meta)
