"""Real pools from NNSmith (and the zoo), one per shipped heuristic, each proving its property.

Properties are checked on the ONNX files themselves, not only on the manifest.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from seedzer.generate import generate_pool, pool_models, read_manifest
from seedzer.generate.onnx_facts import conv_kernels, count_weights
from seedzer.generate.reference import load_reference, run_onnxruntime
from seedzer.generate.seed_pool import sha256_file

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One NNSmith op-support cache for the session (its first build takes a few seconds)."""
    return tmp_path_factory.getbasetemp() / "nnsmith-cache"


def _pool(heuristic: str, count: int, out: Path, cache: Path, **kw: Any) -> list[dict[str, Any]]:
    summary = generate_pool(heuristic, count, out, progress=False, cache_dir=cache, **kw)
    assert summary.total == min(count, 9 if heuristic == "zoo" else count), summary
    models = read_manifest(out)["models"]
    assert [out / e["file"] for e in models] == pool_models(out)
    assert len({e["graph_hash"] for e in models}) == len(models)
    for e in models:
        path = out / e["file"]
        assert sha256_file(path) == e["sha256"]
        proto = onnx.load(path)
        onnx.checker.check_model(proto)
        assert proto.ir_version <= 10
        e["_proto"] = proto
    return models


def _file_kernels(models: list[dict[str, Any]]) -> list[list[int]]:
    return [k for e in models for k, _ in conv_kernels(e["_proto"])]


def test_basic_pool_is_valid_float32_with_reproducible_references(tmp_path: Path, cache: Path) -> None:
    models = _pool("basic", 6, tmp_path / "basic", cache)
    for e in models:
        assert e["dtypes"] == ["float32"] and e["nodes"] >= 1 and e["target_nodes"] == 10
        inputs, outputs, provider = load_reference(tmp_path / "basic" / e["reference"])
        assert provider == e["reference_provider"]
        if provider == "onnxruntime":
            again = run_onnxruntime((tmp_path / "basic" / e["file"]).read_bytes(), inputs)
            for name, value in outputs.items():
                np.testing.assert_allclose(again[name], value, rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize(("heuristic", "allowed"), [("conv1", {1}), ("conv3", {3}), ("conv5", {5, 7})])
def test_conv_pools_obey_their_kernel_sizes(tmp_path: Path, cache: Path, heuristic: str, allowed: set[int]) -> None:
    models = _pool(heuristic, 6, tmp_path / heuristic, cache)
    for e in models:
        kernels = [k for k, _ in conv_kernels(e["_proto"])]
        assert any(len(k) == 2 for k in kernels), f"{e['file']} has no 2-D conv"
        for k in kernels:
            assert set(k) <= allowed, f"{e['file']}: kernel {k}"
            if len(k) == 2:
                assert k[0] == k[1]
        assert all(w <= 262144 for _, w in conv_kernels(e["_proto"]))
    assert _file_kernels(models)


def test_big_pool_is_bigger_than_small_pool(tmp_path: Path, cache: Path) -> None:
    small = _pool("small", 4, tmp_path / "small", cache)
    big = _pool("big", 4, tmp_path / "big", cache)
    small_w = [count_weights(e["_proto"]) for e in small]
    big_w = [count_weights(e["_proto"]) for e in big]
    assert sum(big_w) > sum(small_w)
    assert statistics.fmean(len(e["_proto"].graph.node) for e in big) > statistics.fmean(
        len(e["_proto"].graph.node) for e in small
    )
    candidates = read_manifest(tmp_path / "small" / "candidates")["models"]
    assert len(candidates) == 16
    assert max(small_w) <= sorted(c["weights"] for c in candidates)[len(candidates) // 2]


def test_zoo_pool_holds_the_classic_architectures(tmp_path: Path, cache: Path) -> None:
    summary = generate_pool("zoo", 20, tmp_path / "zoo", progress=False, cache_dir=cache)
    assert summary.total == 9 and summary.requested == 20 and summary.notes
    models = _pool("zoo", 20, tmp_path / "zoo", cache)  # resumes: already complete
    assert {e["zoo_model"] for e in models} >= {"resnet50", "vgg19", "densenet121", "squeezenet", "bvlc_alexnet"}
    assert all(count_weights(e["_proto"]) > 1_000_000 for e in models)
    assert all(e["conv_kernels"] for e in models)


def test_edge_pool_is_valid_and_has_more_edge_features_than_basic(tmp_path: Path, cache: Path) -> None:
    from seedzer.generate.onnx_edges import edge_features

    edge = _pool("edge", 3, tmp_path / "edge", cache, seed=1)
    basic = _pool("basic", 3, tmp_path / "basic", cache, seed=1)
    for e in edge:  # the manifest's features are the file's, and the references were run
        assert e["edge_features"] == edge_features(e["_proto"])
        assert e["reference_provider"] in ("onnxruntime", "onnx.reference")
    assert read_manifest(tmp_path / "edge")["selection"]["heuristic"] == "edge"

    def score(models: list[dict[str, Any]]) -> int:
        return sum(sum(e["edge_features"].values()) for e in models)

    assert score(edge) > score(basic)
    assert any(e["edge_features"]["negative_axes"] for e in edge)


def test_reach_pool_is_valid_and_carries_more_of_the_importers_operators_than_basic(tmp_path: Path,
                                                                                      cache: Path) -> None:
    from seedzer.kernel.onnx.validity import model_validity
    from seedzer.load.importer_ops import importer_operators

    reach = _pool("reach", 6, tmp_path / "reach", cache, seed=2)
    basic = _pool("basic", 6, tmp_path / "basic", cache, seed=2)
    importer = set(importer_operators())

    def carried(models: list[dict[str, Any]]) -> set[str]:
        return {n.op_type for e in models for n in e["_proto"].graph.node} & importer

    assert len(carried(reach)) > len(carried(basic)) + 10
    for e in reach:  # the specification accepts every model, on the reference inputs stored with it
        inputs, _, provider = load_reference(tmp_path / "reach" / e["reference"])
        assert provider == "onnxruntime" and model_validity(e["_proto"], inputs).valid
