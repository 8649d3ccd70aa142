"""Real generation under bad input and accidents: impossible constraints, an empty op set, a run
killed mid-way then resumed, parallel workers, and heuristics shipped in an installed wheel."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import onnx
import pytest

from seedzer.errors import ConfigError
from seedzer.generate import GenerationError, generate_pool, read_manifest
from seedzer.generate.seed_pool import sha256_file

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One NNSmith op-support cache for the session."""
    return tmp_path_factory.getbasetemp() / "nnsmith-cache"


def _yaml(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_impossible_conv_constraints_end_with_one_line(tmp_path: Path, cache: Path) -> None:
    spec = _yaml(
        tmp_path,
        "impossible",
        """
        generation:
          max_nodes: 2
          require_ops: [core.NCHWConv2d]
          max_weight_elements: 1000
          conv: {kernel_sizes: [300]}
        """,
    )
    out = tmp_path / "pool"
    with pytest.raises(GenerationError) as info:
        generate_pool(spec, 3, out, progress=False, cache_dir=cache, attempt_limit=8)
    msg = str(info.value)
    assert "\n" not in msg and "impossible" in msg and "missing required op core.NCHWConv2d" in msg
    data = read_manifest(out)
    assert data["models"] == [] and len(data["rejected"]) == 8
    assert not list(out.glob("*.onnx"))


def test_empty_op_set_is_a_config_error(tmp_path: Path, cache: Path) -> None:
    spec = _yaml(tmp_path, "none", "generation: {include_ops: [core.NoSuchOp]}\n")
    with pytest.raises(ConfigError) as info:
        generate_pool(spec, 1, tmp_path / "p", progress=False, cache_dir=cache)
    assert "\n" not in str(info.value) and spec in str(info.value) and "no NNSmith op" in str(info.value)


def test_poisoned_op_cache_is_rebuilt_in_the_given_directory(tmp_path: Path) -> None:
    from seedzer.generate.nnsmith_adapter import _cache_subdir, prepare_nnsmith

    cache = tmp_path / "cache"
    table = _cache_subdir(cache) / "ONNXModelCPU_exportable.yaml"
    table.parent.mkdir(parents=True)
    table.write_text("topset:\n  core.ReLU:\n    in_dtypes: [[float32]]\n    out_dtypes: [[float32]]\n")
    model_cls = prepare_nnsmith(cache)
    import nnsmith.narrow_spec as narrow_spec

    assert str(table.parent) == narrow_spec.NNSMITH_CACHE_DIR
    rebuilt = narrow_spec.load_topset(str(table))
    assert len(rebuilt) * 2 >= len(model_cls.operators()) and "core.NCHWConv2d" in rebuilt


def _listed(pool: Path) -> int:
    try:
        return len(read_manifest(pool)["models"])
    except Exception:
        return 0


def test_killed_run_resumes_to_the_same_pool_as_a_parallel_run(tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "killed"
    code = (
        "import sys; from pathlib import Path; from seedzer.generate import generate_pool; "
        f"generate_pool('basic', 40, Path({str(out)!r}), progress=False, cache_dir=Path({str(cache)!r}))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 240
        while _listed(out) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert _listed(out) >= 2, "the generator made no progress"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    data = read_manifest(out)
    for e in data["models"]:  # what the manifest lists is complete
        assert sha256_file(out / e["file"]) == e["sha256"]
    for path in out.glob("model_*.onnx"):  # no final-named file is half-written
        onnx.checker.check_model(onnx.load(path))
    count = len(data["models"]) + 2
    resumed = generate_pool("basic", count, out, progress=False, cache_dir=cache)
    assert resumed.total == count
    # Only the killed writer can have left a temporary file (it died mid-write); nothing is deleted.
    assert all(p.name.endswith(f".{proc.pid}.tmp") for p in out.iterdir() if p.name.endswith(".tmp"))
    entries = read_manifest(out)["models"]
    listed = {e["file"] for e in entries} | {e["reference"] for e in entries}
    # Models the killed run wrote after its last manifest flush stay (nothing is deleted) until a run
    # reaches their index and writes the same model again: they all lie beyond what is listed.
    highest = max(int(e["index"]) for e in entries)
    unlisted = {p.name for p in out.glob("model_*")} - listed
    assert all(int(name[len("model_"):len("model_") + 6]) > highest for name in unlisted), unlisted
    fresh = tmp_path / "parallel"
    generate_pool("basic", count, fresh, progress=False, cache_dir=cache, jobs=2)
    assert [e["sha256"] for e in read_manifest(out)["models"]] == [e["sha256"] for e in read_manifest(fresh)["models"]]


@pytest.mark.slow
def test_wheel_ships_the_heuristics(tmp_path: Path) -> None:
    """Build the wheel, install it elsewhere and load the heuristics from the installed copy."""
    wheels, target = tmp_path / "w", tmp_path / "site"
    build = tmp_path / "src"
    build.mkdir()
    for part in ("pyproject.toml", "seedzer", "heuristics"):  # a clean copy: no build/ left in the repo
        subprocess.run(["cp", "-r", str(ROOT / part), str(build)], check=True)
    (build / "README.md").write_text("x")
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", ".", "-w", str(wheels), "--no-deps", "--no-build-isolation", "-q"], cwd=build, check=True
    )
    (wheel,) = wheels.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for h in ("basic", "conv1", "conv3", "conv5", "small", "big", "zoo"):
        assert f"seedzer/_heuristics/{h}.yaml" in names, f"{h}.yaml missing from the wheel"
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), "-q", str(wheel)], check=True)
    probe = (
        "from seedzer.generate.heuristics import heuristics_dir, load_heuristic; "
        "print(heuristics_dir()); load_heuristic('conv3')"
    )
    res = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(target)},
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert res.stdout.strip().startswith(str(target))
