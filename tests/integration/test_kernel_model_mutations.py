"""Integration tests of the model-mutation kernel (UOC, PIOC, spec-edge) under onnxruntime."""

from __future__ import annotations

import random

import numpy as np
import onnx
import pytest

from seedzer.kernel.graph.case import ModelMutation
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.onnx.runtime import onnxruntime_outputs
from seedzer.mutate.graph.model_mutators import random_feeds, sample_model_mutation
from tests.unit.mutate.graph.test_model_mutators import SMALL_MODELS, conv_model, dense_model

pytestmark = pytest.mark.integration

def _models() -> list[onnx.ModelProto]:
    """The small models (pool models: benchmarks/model_mutation_soundness.py --pool DIR)."""
    return [make() for make in SMALL_MODELS]


def _chain(model: onnx.ModelProto, kinds: list[str], rng: random.Random, feeds: dict[str, np.ndarray]
           ) -> tuple[list[ModelMutation], onnx.ModelProto]:
    chain, current = [], model
    for kind in kinds:
        record = sample_model_mutation(current, kind, rng)
        assert record is not None
        chain.append(record)
        current = apply_model_mutations(current, [record], feeds)
    return chain, current


def _same(expected: list[np.ndarray], actual: list[np.ndarray]) -> bool:
    return all(np.array_equal(e, a, equal_nan=True) for e, a in zip(expected, actual, strict=True))


def test_uoc_chains_are_exact_on_any_input() -> None:
    rng, models = random.Random(0), _models()
    for n in range(30):
        model = models[n % len(models)]
        feeds = random_feeds(model, n)
        chain, mutated = _chain(model, ["uoc"] * rng.randint(1, 4), rng, feeds)
        onnx.checker.check_model(mutated, full_check=True)
        assert mutated.SerializeToString() == apply_model_mutations(model, chain, feeds).SerializeToString()
        other = {k: np.asarray(v * 1000, dtype=v.dtype) if v.dtype.kind == "f" else v  # beyond UOC_BOUND too
                 for k, v in random_feeds(model, 1000 + n).items()}
        assert _same(onnxruntime_outputs(model, other), onnxruntime_outputs(mutated, other))


def test_uoc_survives_nan_and_inf_inputs() -> None:
    model = conv_model()
    feeds = {"x": np.full((1, 3, 4, 4), np.inf, np.float32)}
    feeds["x"][0, 0] = np.nan
    feeds["x"][0, 1] = -3e38
    for seed in range(10):
        _, mutated = _chain(model, ["uoc", "uoc"], random.Random(seed), feeds)
        assert _same(onnxruntime_outputs(model, feeds), onnxruntime_outputs(mutated, feeds))


def test_pioc_chains_are_exact_on_the_profiled_input() -> None:
    rng = random.Random(1)
    models = _models()
    for n in range(30):
        model = models[n % len(models)]
        feeds = random_feeds(model, n)
        chain, mutated = _chain(model, [rng.choice(["uoc", "pioc"]) for _ in range(rng.randint(1, 4))], rng, feeds)
        onnx.checker.check_model(mutated, full_check=True)
        assert _same(onnxruntime_outputs(model, feeds), onnxruntime_outputs(mutated, feeds))
        replay = apply_model_mutations(model, [ModelMutation.from_json(m.to_json()) for m in chain], feeds)
        assert replay.SerializeToString() == mutated.SerializeToString()


def test_pioc_is_per_input() -> None:
    model = dense_model()
    feeds = random_feeds(model, 0)
    record = ModelMutation("pioc", "m", garbage=("Add",), seed=3)
    mutated = apply_model_mutations(model, [record], feeds)
    other = random_feeds(model, 1)
    assert not _same(onnxruntime_outputs(model, other), onnxruntime_outputs(mutated, other))


def test_edges_pass_the_checker_and_run() -> None:
    rng = random.Random(2)
    models = _models()
    sampled = 0
    for n in range(30):
        model = models[n % len(models)]
        feeds = random_feeds(model, n)
        record = sample_model_mutation(model, "edge", rng, feeds)
        if record is None:
            continue
        sampled += 1
        mutated = apply_model_mutations(model, [record], feeds)
        onnx.checker.check_model(mutated, full_check=True)
        onnxruntime_outputs(mutated, feeds)
        assert apply_model_mutations(model, [record], feeds).SerializeToString() == mutated.SerializeToString()
    assert sampled >= 25


def test_records_that_no_longer_fit_raise() -> None:
    model, feeds = conv_model(), random_feeds(conv_model(), 0)
    with pytest.raises(ValueError, match="gone"):
        apply_model_mutations(model, [ModelMutation("uoc", "nowhere", ("x", "b"), ("Add",))], feeds)
    with pytest.raises(ValueError, match="gone"):
        apply_model_mutations(model, [ModelMutation("uoc", "c", ("x", "missing"), ("Add",))], feeds)
    with pytest.raises(ValueError, match="depends on the target"):
        apply_model_mutations(model, [ModelMutation("uoc", "c", ("l", "x"), ("Add",))], feeds)
    with pytest.raises(ValueError, match="gone"):
        apply_model_mutations(model, [ModelMutation("pioc", "nowhere", (), ("Add",))], feeds)
    with pytest.raises(ValueError, match="is a LeakyRelu"):
        apply_model_mutations(model, [ModelMutation("edge", "l", params={"op": "Relu", "changes": []})], feeds)
    # a later record that uses a tensor an earlier one made fails once the earlier one is dropped
    first = ModelMutation("uoc", "c", ("x", "b"), ("Add",), seed=1)
    made = apply_model_mutations(model, [first], feeds)
    inner = next(n.output[0] for n in made.graph.node if n.op_type == "Relu" and n.output[0].startswith("mm_"))
    second = ModelMutation("uoc", "y", (inner, "b"), ("Mul",), seed=2)
    apply_model_mutations(model, [first, second], feeds)
    with pytest.raises(ValueError, match="gone"):
        apply_model_mutations(model, [second], feeds)


def test_application_is_deterministic_and_names_are_fresh() -> None:
    model, feeds = dense_model(), random_feeds(dense_model(), 0)
    chain = [ModelMutation("uoc", "m", ("a", "a"), ("Gemm", "MatMul", "Sub"), seed=5),
             ModelMutation("uoc", "m", ("a", "a"), ("Gemm", "MatMul", "Sub"), seed=5),
             ModelMutation("pioc", "sm", (), ("Mul",), seed=6)]
    first = apply_model_mutations(model, chain, feeds)
    assert first.SerializeToString() == apply_model_mutations(model, chain, feeds).SerializeToString()
    outputs = [o for n in first.graph.node for o in n.output]
    assert len(outputs) == len(set(outputs))
    assert _same(onnxruntime_outputs(model, feeds), onnxruntime_outputs(first, feeds))
