"""A fixed import+compile workload for checking and measuring the breakpoints backend (imports TVM).

Three small ONNX models (built with ``onnx.helper``) are imported into Relax, legalized, compiled
for LLVM and run on fixed inputs. The result of one pass is a digest per model of the legalized IR
text and of the output bytes: a run with breakpoints must give exactly the digests of a run
without. Run as ``python -m seedzer.coverage.workload [--breakpoints] ...``; it prints one JSON
line (results, seconds per round, blocks reached) and is what ``seedzer coverage selftest`` and
``benchmarks/coverage_overhead.py`` start in fresh processes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(name: str, nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any]) -> onnx.ModelProto:
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def models() -> dict[str, onnx.ModelProto]:
    """The workload's models: conv+relu, matmul+add+softmax, pooling+reduction."""
    rng = np.random.default_rng(7)
    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype("float32"), "w")
    m = numpy_helper.from_array(rng.standard_normal((16, 8)).astype("float32"), "m")
    b = numpy_helper.from_array(rng.standard_normal((8,)).astype("float32"), "b")
    return {
        "conv_relu": _model("conv_relu", [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
                                          helper.make_node("Relu", ["c"], ["y"])],
                            [vi("x", f, [1, 3, 10, 10])], [vi("y", f, [1, 4, 8, 8])], [w]),
        "dense_softmax": _model("dense_softmax", [helper.make_node("MatMul", ["x", "m"], ["p"]),
                                                  helper.make_node("Add", ["p", "b"], ["q"]),
                                                  helper.make_node("Softmax", ["q"], ["y"], axis=-1)],
                                [vi("x", f, [4, 16])], [vi("y", f, [4, 8])], [m, b]),
        "pool_reduce": _model("pool_reduce", [helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2],
                                                               strides=[2, 2]),
                                              helper.make_node("ReduceMean", ["p"], ["y"], keepdims=0)],
                              [vi("x", f, [1, 2, 8, 8])], [vi("y", f, [])], []),
    }


def run_once() -> dict[str, dict[str, str]]:
    """Import, legalize, compile and run every model; digests of IR text and outputs per model."""
    from tvm import relax

    from seedzer.load.differential import build, run_vm
    from seedzer.load.onnx_import import import_relax, input_specs

    out: dict[str, dict[str, str]] = {}
    for name, model in models().items():
        specs, _ = input_specs(model, name)
        mod = import_relax(model, specs)
        legal = relax.transform.LegalizeOps()(mod)
        rng = np.random.default_rng(1)
        feeds = {s.name: rng.uniform(-1, 1, size=s.shape).astype(s.dtype) for s in specs}
        outputs = run_vm(build(mod), specs, feeds)
        out[name] = {
            "ir": hashlib.sha256(str(legal.script()).encode()).hexdigest()[:16],
            "out": hashlib.sha256(b"".join(np.ascontiguousarray(o).tobytes() for o in outputs)).hexdigest()[:16],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the workload ``--rounds`` times, with or without breakpoints; print one JSON line."""
    ap = argparse.ArgumentParser(prog="python -m seedzer.coverage.workload")
    ap.add_argument("--breakpoints", action="store_true", help="arm breakpoints on libtvm_compiler.so first")
    ap.add_argument("--cache", default="~/.cache/seedzer/blocks", help="block table cache directory")
    ap.add_argument("--granularity", default="blocks", choices=["blocks", "functions"])
    ap.add_argument("--hitmap", default=None, help="hit map file (default: a temporary file)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--writable-text", action="store_true", help="restore bytes by direct stores (text stays RWX)")
    args = ap.parse_args(argv)
    import tempfile

    import tvm  # noqa: F401  (loads libtvm_compiler.so before arming)

    report: dict[str, Any] = {"breakpoints": args.breakpoints, "seconds": [], "new_blocks": []}
    bp = None
    if args.breakpoints:
        from seedzer.coverage.blocktable import load_or_build, tvm_compiler_library
        from seedzer.coverage.bpcollector import Breakpoints
        from seedzer.coverage.hitmap import HitMap

        table = load_or_build(tvm_compiler_library(), args.cache, args.granularity, progress=False)
        fd, tmp = tempfile.mkstemp(prefix="seedzer-hitmap-")
        os.close(fd)
        bp = Breakpoints(table, HitMap.create(args.hitmap or tmp, len(table.offsets)))
        os.unlink(tmp)  # the mapping outlives the name
        t = time.perf_counter()
        report["armed"] = bp.arm(writable_text=args.writable_text)
        report["arm_seconds"] = round(time.perf_counter() - t, 4)
    results = None
    for _ in range(max(1, args.rounds)):
        t = time.perf_counter()
        got = run_once()
        report["seconds"].append(round(time.perf_counter() - t, 4))
        if results is not None and got != results:
            report["unstable"] = True
        results = got
        if bp is not None:
            idx = bp.take_indices()
            report["new_blocks"].append(len(idx))
            report.setdefault("new_llvm_blocks", []).append(int(bp.table.is_llvm()[idx].sum()))
    report["results"] = results
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
