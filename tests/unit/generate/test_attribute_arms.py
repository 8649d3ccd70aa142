"""The attribute choices generation epochs learn (seedzer.generate.attribute_arms): which are open for a
heuristic, how a model draws its values with the learned weights, what they change, what is recorded."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

from seedzer.generate.attribute_arms import ARMS, VariedGenerator, applicable, apply, choose, in_effect, label
from seedzer.generate.heuristics import load_heuristic
from seedzer.generate.options import ConvOptions, EdgeOptions, GenerationOptions
from seedzer.protocols import GeneratedModel


def test_the_open_attributes_are_those_the_heuristic_leaves_unset() -> None:
    assert set(applicable(load_heuristic("basic").generation)) == {"nodes", "kernel", "edges"}
    assert set(applicable(load_heuristic("conv3").generation)) == {"nodes", "edges"}  # its kernel is its choice
    assert set(applicable(load_heuristic("edge").generation)) == {"nodes", "kernel"}  # its edge biases too
    assert applicable(GenerationOptions(source="zoo")) == {}


def test_each_value_changes_the_options_as_the_heuristics_would() -> None:
    base = GenerationOptions(max_nodes=10, min_nodes=8)
    assert apply(base, {"nodes": "fewer"}).max_nodes == 5 and apply(base, {"nodes": "fewer"}).min_nodes == 5
    assert apply(base, {"nodes": "more"}).max_nodes == 20 and apply(base, {"nodes": "as-given"}) == base
    assert apply(GenerationOptions(max_nodes=80), {"nodes": "more"}).max_nodes == 100
    assert apply(GenerationOptions(max_nodes=3), {"nodes": "fewer"}).max_nodes == 2
    assert apply(base, {"kernel": "3"}).conv == ConvOptions(kernel_sizes=(3,))
    assert apply(base, {"kernel": "5-7"}).conv.allows([5, 5]) and not apply(base, {"kernel": "5-7"}).conv.allows([3, 3])
    ends = apply(base, {"edges": "ends"}).edge
    assert ends.active and ends.attributes > 0 and apply(base, {"edges": "off"}).edge == EdgeOptions()


def test_values_are_drawn_in_proportion_to_their_weights_and_uniformly_without_any() -> None:
    base = load_heuristic("basic").generation
    rng = random.Random(3)
    uniform = Counter(choose(base, {}, rng)["kernel"] for _ in range(4000))
    assert set(uniform) == set(ARMS["kernel"]) and min(uniform.values()) > 800
    weights = {label("nodes", "more"): 1.8, label("nodes", "fewer"): 0.05, label("nodes", "as-given"): 0.15}
    drawn = Counter(choose(base, weights, rng)["nodes"] for _ in range(4000))
    assert drawn["more"] > 3000 and drawn["fewer"] < 200
    assert choose(base, weights, random.Random(9)) == choose(base, weights, random.Random(9))  # the seed's alone


def test_kernel_is_recorded_only_for_a_model_with_a_convolution() -> None:
    choice = {"nodes": "more", "kernel": "3", "edges": "off"}
    assert in_effect(choice, {"conv_kernels": [[3, 3]]}) == ["nodes=more", "kernel=3", "edges=off"]
    assert in_effect(choice, {"conv_kernels": []}) == ["nodes=more", "edges=off"]


class _Fake:
    """A stand-in NNSmith generator: remembers its options, returns a model with no convolution."""

    def __init__(self, opts: GenerationOptions) -> None:
        self.opts = opts

    def generate(self, seed: int) -> GeneratedModel:
        return GeneratedModel(b"onnx", {"nnsmith_seed": seed, "conv_kernels": [], "max_nodes": self.opts.max_nodes})


def test_a_varied_generator_makes_each_model_with_its_own_values_one_generator_per_choice() -> None:
    made: list[GenerationOptions] = []

    def make(opts: GenerationOptions) -> Any:
        made.append(opts)
        return _Fake(opts)

    base = load_heuristic("basic").generation
    gen = VariedGenerator(base, {}, Path("."), make=make)
    models = [gen.generate(seed) for seed in range(60)]
    assert all(m.meta["attributes"][0].startswith("nodes=") and not any(a.startswith("kernel=")
               for a in m.meta["attributes"]) for m in models)
    sizes = {m.meta["attributes"][0]: m.meta["max_nodes"] for m in models}
    assert sizes == {"nodes=fewer": 5, "nodes=as-given": 10, "nodes=more": 20}
    assert len(made) == len(gen.generators) < 60  # generators are reused for a choice drawn again
    again = VariedGenerator(base, {}, Path("."), make=make).generate(7)
    assert again.meta["attributes"] == models[7].meta["attributes"]  # a resumed epoch draws the same
