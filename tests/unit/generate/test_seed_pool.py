"""Pool storage: atomic writes, manifest, resume bookkeeping, ENOSPC, stray files, pool_models.

Also provides ``tiny_model``: a real, small ONNX model with facts and reference outputs, used by
the other generate unit tests in place of NNSmith.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.errors import PoolError
from seedzer.generate import seed_pool as pool_mod
from seedzer.generate.onnx_facts import model_facts
from seedzer.generate.reference import npz_bytes, run_onnxruntime
from seedzer.generate.seed_pool import PoolWriter, pool_models, read_manifest
from seedzer.protocols import GeneratedModel
from seedzer.store.lock import LockError

HEADER = {"heuristic": "basic", "generation": {"max_nodes": 10}, "seed": 0}


def tiny_model(seed: int, kernel: int = 3, channels: int | None = None) -> GeneratedModel:
    """x -> Conv(kernel) -> Relu -> y, with sizes drawn from ``seed``; facts and reference included."""
    rng = np.random.default_rng(seed)
    c = channels or int(rng.integers(1, 6))
    hw = int(rng.integers(kernel, kernel + 6))
    w = numpy_helper.from_array(rng.standard_normal((c, 2, kernel, kernel)).astype("float32"), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, hw, hw])
    out = hw - kernel + 1
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, out, out])
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[kernel, kernel]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "tiny", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7
    data = model.SerializeToString()
    inputs = {"x": rng.uniform(0, 1, (1, 2, hw, hw)).astype("float32")}
    outputs = run_onnxruntime(data, inputs)
    meta = {
        "nnsmith_seed": seed,
        **model_facts(model),
        "reference_provider": "onnxruntime",
        "finite": True,
        "gen_seconds": 0.01,
        "reference_npz": npz_bytes(inputs, outputs, "onnxruntime"),
    }
    return GeneratedModel(onnx_bytes=data, meta=meta)


def test_writer_writes_models_references_and_manifest(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER) as w:
        assert w.add_model(0, 11, tiny_model(1)) is not None
        w.add_rejected(1, 12, "z3 unsat", "no op")
        assert w.add_model(2, 13, tiny_model(2)) is not None
    data = read_manifest(tmp_path / "p")
    assert [e["index"] for e in data["models"]] == [0, 2]
    assert data["rejected"] == [{"index": 1, "seed": 12, "reason": "z3 unsat", "detail": "no op"}]
    assert data["rejected_counts"] == {"z3 unsat": 1}
    for entry in data["models"]:
        path = tmp_path / "p" / entry["file"]
        onnx.checker.check_model(onnx.load(path))
        assert pool_mod.sha256_file(path) == entry["sha256"]
        with np.load(tmp_path / "p" / entry["reference"]) as ref:
            assert "input:x" in ref.files and "output:y" in ref.files
    assert pool_models(tmp_path / "p") == [tmp_path / "p" / "model_000000.onnx", tmp_path / "p" / "model_000002.onnx"]


def test_duplicate_graph_is_rejected_not_written(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER) as w:
        w.add_model(0, 1, tiny_model(5))
        assert w.add_model(1, 2, tiny_model(5)) is None
    data = read_manifest(tmp_path / "p")
    assert len(data["models"]) == 1
    assert data["rejected_counts"] == {"duplicate": 1}
    assert not (tmp_path / "p" / "model_000001.onnx").exists()


def test_reopen_remembers_tried_attempts_and_hashes(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER) as w:
        w.add_model(0, 1, tiny_model(1))
        w.add_rejected(1, 2, "z3 unsat")
    with PoolWriter(tmp_path / "p", HEADER) as w:
        assert w.tried == {0, 1}
        assert w.count == 1
        assert w.add_model(2, 3, tiny_model(1)) is None  # same graph as model 0


def test_reopen_with_other_options_is_refused(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER) as w:
        w.add_model(0, 1, tiny_model(1))
    with pytest.raises(PoolError, match=r"different seed settings") as info:
        PoolWriter(tmp_path / "p", {**HEADER, "seed": 7})
    assert "\n" not in str(info.value)
    PoolWriter(tmp_path / "p", HEADER).close()  # the refused attempt released the lock


def test_second_writer_is_refused_while_locked(tmp_path: Path) -> None:
    import subprocess
    import sys
    import textwrap

    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from seedzer.store.lock import DirLock
        with DirLock({str(tmp_path / "p")!r}, what="pool", command="seedzer generate (test)"):
            print("locked", flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockError, match=rf"pool {tmp_path / 'p'} is in use by seedzer process {holder.pid} "
                                            r"\('seedzer generate \(test\)', since "):
            PoolWriter(tmp_path / "p", HEADER)
    finally:
        holder.kill()
        holder.wait()
    PoolWriter(tmp_path / "p", HEADER).close()  # the kernel released the killed holder's lock


def test_altered_files_are_dropped_and_nothing_is_deleted_on_reopen(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER) as w:
        w.add_model(0, 1, tiny_model(1))
        w.add_model(1, 2, tiny_model(2))
    pool = tmp_path / "p"
    (pool / ".model_000009.onnx.123.tmp").write_bytes(b"half")
    (pool / "model_000007.onnx").write_bytes(b"orphan from an interrupted run")
    (pool / "model_000001.onnx").write_bytes(b"corrupted")
    (pool / "notes.txt").write_text("user file")
    before = sorted(p.name for p in pool.iterdir())
    with PoolWriter(pool, HEADER) as w:
        assert w.count == 1 and 1 not in w.tried  # the altered model will be regenerated
    assert sorted(p.name for p in pool.iterdir()) == before  # nothing deleted
    assert [e["file"] for e in read_manifest(pool)["models"]] == ["model_000000.onnx"]


def test_models_without_manifest_are_refused_and_kept(tmp_path: Path) -> None:
    pool = tmp_path / "p"
    pool.mkdir()
    (pool / "model_000000.onnx").write_bytes(b"someone's model")
    with pytest.raises(PoolError, match=r"holds model_000000.onnx but no manifest.json") as info:
        PoolWriter(pool, HEADER)
    assert "\n" not in str(info.value)
    assert sorted(p.name for p in pool.iterdir()) == ["model_000000.onnx"]


def test_manifest_exists_before_the_first_model(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER):
        assert read_manifest(tmp_path / "p")["models"] == []


@pytest.mark.parametrize("name", ["../victim.txt", "/etc/passwd", "sub/../../x.onnx", "~/x.onnx", "link.onnx"])
def test_manifest_paths_must_stay_inside_the_pool(tmp_path: Path, name: str) -> None:
    pool = tmp_path / "p"
    pool.mkdir()
    (pool / "link.onnx").symlink_to(tmp_path / "outside.onnx")
    (pool / "manifest.json").write_text(json.dumps({"models": [{"file": name}]}))
    with pytest.raises(PoolError, match=r"manifest.json: models\[0\].file .* (is|leads) outside the pool") as info:
        pool_models(pool)
    assert str(pool / "manifest.json") in str(info.value) and "\n" not in str(info.value)


def test_verified_models_check_sha256(tmp_path: Path) -> None:
    with PoolWriter(tmp_path / "p", HEADER) as w:
        w.add_model(0, 1, tiny_model(1))
        w.add_model(1, 2, tiny_model(2))
    assert pool_mod.verified_models(tmp_path / "p") == pool_models(tmp_path / "p")
    (tmp_path / "p" / "model_000001.onnx").write_bytes(b"x")
    with pytest.raises(PoolError, match=r"1 listed file\(s\) missing or corrupt \(model_000001.onnx: corrupt"):
        pool_mod.verified_models(tmp_path / "p")


class _FullDisk:
    """A file object that accepts a few bytes, then fails like a full disk."""

    def __init__(self, path: str, mode: str) -> None:
        self._fh = open(path, mode)  # noqa: SIM115 - closed in __exit__

    def write(self, data: bytes) -> int:
        self._fh.write(data[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()


def test_enospc_is_one_line_error_and_nothing_half_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = tmp_path / "p"
    with PoolWriter(pool, HEADER) as w:
        w.add_model(0, 1, tiny_model(1))
    real_open = open

    def fake_open(path: str, mode: str = "r", *a: object, **k: object) -> object:
        if "w" in mode:
            return _FullDisk(path, mode)
        return real_open(path, mode, *a, **k)  # type: ignore[call-overload]

    monkeypatch.setattr(pool_mod, "open", fake_open, raising=False)
    with pytest.raises(PoolError) as info, PoolWriter(pool, HEADER) as w:
        w.add_model(1, 2, tiny_model(2))
    msg = str(info.value)
    assert "\n" not in msg and str(pool) in msg and "no space left on device" in msg
    monkeypatch.undo()
    names = {p.name for p in pool.iterdir()}
    assert not any(n.endswith(".tmp") for n in names)
    assert "model_000001.onnx" not in names
    assert [e["index"] for e in read_manifest(pool)["models"]] == [0]


@pytest.mark.parametrize(
    ("setup", "match"),
    [
        (lambda p: None, "no such directory"),
        (lambda p: p.mkdir(), "no manifest.json"),
        (lambda p: (p.mkdir(), (p / "manifest.json").write_text("{not json")), "unreadable manifest.json"),
        (lambda p: (p.mkdir(), (p / "manifest.json").write_text(json.dumps({"models": []}))), "lists no models"),
    ],
)
def test_pool_models_errors_name_the_directory(tmp_path: Path, setup: object, match: str) -> None:
    pool = tmp_path / "pool"
    setup(pool)  # type: ignore[operator]
    with pytest.raises(PoolError, match=match) as info:
        pool_models(pool)
    assert str(pool) in str(info.value) and "\n" not in str(info.value)
