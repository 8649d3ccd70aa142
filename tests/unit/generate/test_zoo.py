"""The model-zoo source: which files exist, name filtering, facts of a real architecture."""

from __future__ import annotations

import pytest

from seedzer.errors import ConfigError
from seedzer.generate.onnx_facts import model_facts
from seedzer.generate.options import GenerationOptions
from seedzer.generate.zoo import zoo_model, zoo_models, zoo_name

CLASSICS = {
    "bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
    "shufflenet", "squeezenet", "vgg19", "zfnet512",
}  # fmt: skip


def test_zoo_lists_the_nine_installed_architectures() -> None:
    names = {zoo_name(p) for p in zoo_models(GenerationOptions(source="zoo"))}
    assert names == CLASSICS


def test_zoo_subset_and_unknown_name() -> None:
    files = zoo_models(GenerationOptions(source="zoo", zoo_models=("squeezenet",)))
    assert [zoo_name(p) for p in files] == ["squeezenet"]
    with pytest.raises(ConfigError, match="unknown zoo model 'lenet'"):
        zoo_models(GenerationOptions(source="zoo", zoo_models=("lenet",)))


def test_zoo_model_facts_match_the_real_architecture() -> None:
    (path,) = zoo_models(GenerationOptions(source="zoo", zoo_models=("squeezenet",)))
    model = zoo_model(path, seed=1)
    assert model.meta["zoo_model"] == "squeezenet" and model.meta["reference_provider"] == "onnxruntime"
    assert model.meta["weights"] == 1_235_496  # SqueezeNet 1.0's parameter count
    assert len(model.meta["conv_kernels"]) == 26 and [1, 1] in model.meta["conv_kernels"]
    import onnx

    assert model_facts(onnx.load(path))["graph_hash"] == model.meta["graph_hash"]
