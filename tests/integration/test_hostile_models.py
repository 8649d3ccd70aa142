"""Hostile models (issue 32): over the bounds or of an unknown opset, refused before anything runs,
and an allocation past a child's address-space limit is ``invalid``; (issue 45) a model onnxruntime
refuses to run, or with an input type TVM's importer does not take, is ``invalid`` for the loader and
for the gate that ``recheck`` runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from seedzer.execute.isolated_call import run_isolated
from seedzer.execute.isolated_load import OnnxLoader
from seedzer.finding.load.folder import LoadFinding
from seedzer.finding.load.gate import run_load_gate_on_folder
from seedzer.finding.meta import NOT_A_BUG
from seedzer.finding.store import dump
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.load.observe import LoadCase
from seedzer.kernel.onnx.runtime import REFUSED
from seedzer.load.loader import MODEL_FILE, LoaderFailure, LoadOptions
from tests.hostile_models import huge_reshape

pytestmark = pytest.mark.integration


PEAK_RSS = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[2:]).returncode; "
            "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
            "sys.exit(code)")
"""Runs a command and writes the peak RSS (KiB) of its largest process: a fresh parent, so that no
earlier test's children (TVM workers of a gigabyte) count."""


def _relu(shape: list[int], opset: int = 17) -> bytes:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()


def _huge_initializer(tmp: Path) -> bytes:
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[10**10])
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="w.bin")
    with open(tmp / "w.bin", "wb") as fh:  # a sparse 40 GB file: reading it would allocate 40 GB
        fh.truncate(4 * 10**10)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [10**10])], initializer=[w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def test_load_refuses_hostile_models_without_allocating(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "big_input.onnx").write_bytes(_relu([1000, 1000, 1000]))
    (pool / "big_init.onnx").write_bytes(_huge_initializer(pool))
    (pool / "opset999.onnx").write_bytes(_relu([2], opset=999))
    peak_file = tmp_path / "peak_kib"
    proc = subprocess.run([sys.executable, "-c", PEAK_RSS, str(peak_file), sys.executable, "-m", "seedzer.cli",
                           "load", str(pool)], capture_output=True, text=True, timeout=300)
    peak_kib = int(peak_file.read_text())
    assert proc.returncode == 2, proc.stderr  # as for any pool none of whose models can be loaded
    err = " ".join(proc.stderr.split())
    assert "big_input.onnx: input 'x' declares 1000x1000x1000 float32 = 4.0 GB, over limits.max_tensor_bytes" in err
    assert "40.0 GB" in err or "3 more" in err or "and 1 more" in err
    assert "Traceback" not in proc.stderr
    assert 0 < peak_kib < 1 << 20  # under 1 GiB: nothing near 4 GB was allocated


def test_load_lists_hostile_models_among_good_ones(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "a_good.onnx").write_bytes(_relu([2, 3]))
    (pool / "big_input.onnx").write_bytes(_relu([1000, 1000, 1000]))
    (pool / "opset999.onnx").write_bytes(_relu([2], opset=999))
    proc = subprocess.run([sys.executable, "-m", "seedzer.cli", "load", "--no-fold", str(pool)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr
    err = " ".join(proc.stderr.split())
    assert "big_input.onnx: ONNX model big_input.onnx: input 'x' declares 1000x1000x1000 float32" in err
    assert "opset999.onnx: ONNX model opset999.onnx: opset 999 is newer than the installed onnx" in err
    assert "a_good.onnx: 1 seeds (raw), matched" in proc.stdout or "a_good.onnx:" in proc.stdout
    assert "opset999" not in proc.stdout.split("Failures by signature")[0]


def allocate_4gb() -> int:
    """Allocate (and touch) 4 GB: under a smaller address-space limit this raises MemoryError."""
    return int(np.ones(10**9, dtype=np.float32).sum())


def test_an_allocation_past_the_memory_limit_is_invalid() -> None:
    res = run_isolated(allocate_4gb, timeout=120, stage=Stage.LOAD, memory=2 << 30)
    assert res.outcome is not None and res.outcome.symptom is Symptom.INVALID
    assert "out of memory (MemoryError" in res.outcome.message and "limits.max_testcase_memory 2.0 GiB" in (
        res.outcome.message)


# --- issue 45 row 2: invalid or unsupported models are never filed -----------------------------------
def _old_load_finding(tmp_path: Path, model: onnx.ModelProto, specs: tuple[tuple[str, str, tuple[int, ...]], ...],
                      observation: Observation) -> Path:
    """A load finding as Seedzer filed it before issue 45: ``observation`` (a TVM exception) at import."""
    path = tmp_path / "pool" / "model.onnx"
    path.parent.mkdir(exist_ok=True)
    onnx.save(model, path)
    case = LoadCase(specs, model_file=MODEL_FILE, timeout=120).to_json()
    finding = LoadFinding.of(path, LoaderFailure(observation, "raw", case))
    return dump(tmp_path / "findings" / finding.signature, finding)


def test_a_model_onnxruntime_refuses_to_run_is_invalid_for_the_loader_and_for_recheck(tmp_path: Path) -> None:
    """Before: TVM's import error on the 10**10-element reshape was filed as a bug and recheck kept it.
    After: the loader counts it invalid (onnxruntime refuses the run), and the gate (what recheck runs)
    dismisses the finding filed the old way."""
    model = huge_reshape()
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    observed = OnnxLoader(LoadOptions(timeout=120)).load(path).observations
    assert observed and all(o.symptom is Symptom.INVALID for o in observed), observed
    # each attempt is turned away before TVM is blamed: onnxruntime refuses the run, or (the attempt whose
    # shape became a ShapeExpr) the importer's deliberate "cannot handle ShapeExpr inputs" refusal
    assert all(o.message.startswith((REFUSED, "unsupported by TVM's importer")) for o in observed), observed
    assert any(o.message.startswith(REFUSED) for o in observed), observed
    old = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", "ValueError: Node  cannot handle ShapeExpr inputs.")
    verdict = run_load_gate_on_folder(str(_old_load_finding(tmp_path, model, (("x", "float32", (2, 2)),), old)))
    assert verdict.verdict == NOT_A_BUG, verdict.reason
    assert verdict.reason.startswith((f"invalid: {REFUSED}", "invalid: unsupported by TVM's importer")), verdict.reason


@pytest.mark.parametrize(("dtype", "numpy_name", "shown"), [(TensorProto.STRING, "object", "string"),
                                                            (TensorProto.COMPLEX64, "complex64", "complex64")])
def test_an_input_type_tvm_does_not_take_is_unsupported_for_the_loader_and_for_recheck(
        tmp_path: Path, dtype: int, numpy_name: str, shown: str) -> None:
    """Before: "unknown dtype" at import, filed as an exception bug. After: invalid at parse, and an
    older finding of it is dismissed by the gate as an unsupported input type."""
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", dtype, [2])],
                              [helper.make_tensor_value_info("y", dtype, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    observed = OnnxLoader(LoadOptions(timeout=120)).load(path).observations
    assert [(o.symptom, o.pass_name) for o in observed] == [(Symptom.INVALID, "parse")]
    assert f"unsupported input type: input 'x' is {shown}" in observed[0].message
    old = Observation(Symptom.EXCEPTION, Stage.LOAD, "import", f"ValueError: unknown dtype `{numpy_name}`")
    verdict = run_load_gate_on_folder(str(_old_load_finding(tmp_path, model, (("x", numpy_name, (2,)),), old)))
    assert verdict.verdict == NOT_A_BUG, verdict.reason
    assert verdict.reason.startswith("invalid: UnsupportedInput: unsupported input type"), verdict.reason
