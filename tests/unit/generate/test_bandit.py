"""The operator bandit of generation epochs (seedzer.generate.bandit)."""

from __future__ import annotations

import random

from seedzer.generate.bandit import ModelOutcome, Posterior, posterior, successes, thompson, top_weights


def _o(model: str, reward: float, ops: tuple[str, ...], epoch: int = 0, onnx: tuple[str, ...] = ()) -> ModelOutcome:
    return ModelOutcome(model, epoch, ops, onnx, reward)


def test_a_success_is_a_reward_above_its_own_epochs_median() -> None:
    outcomes = [_o("a", 1, ()), _o("b", 5, ()), _o("c", 9, ()), _o("d", 0, (), epoch=1), _o("e", 0.5, (), epoch=1)]
    assert successes(outcomes) == {"a": False, "b": False, "c": True, "d": False, "e": True}


def test_the_posterior_credits_every_distinct_operator_of_a_model_once() -> None:
    outcomes = [_o("a", 10, ("Conv2d", "Relu", "Relu")), _o("b", 0, ("Relu", "Add")), _o("c", 1, ("Add",))]
    post = posterior(outcomes)
    # median 1: a succeeds, b and c fail
    assert post == {"Add": Posterior(1, 3), "Conv2d": Posterior(2, 1), "Relu": Posterior(2, 2)}
    assert post["Conv2d"].mean > post["Relu"].mean > post["Add"].mean


def test_the_onnx_posterior_counts_the_onnx_operators() -> None:
    post = posterior([_o("a", 3, ("Conv2d",), onnx=("Conv", "Shape")), _o("b", 0, ("Add",), onnx=("Add",))],
                     onnx=True)
    assert set(post) == {"Conv", "Shape", "Add"} and post["Conv"] == Posterior(2, 1)


def test_an_epoch_whose_models_tie_teaches_only_failures() -> None:
    post = posterior([_o("a", 0, ("Relu",)), _o("b", 0, ("Relu",))])
    assert post["Relu"] == Posterior(1, 3)


def test_the_thompson_draw_is_the_seeds_alone_and_scaled_around_one() -> None:
    post = {"Relu": Posterior(30, 2), "Add": Posterior(2, 30), "Conv2d": Posterior(1, 1)}
    first, again = thompson(post, random.Random(7)), thompson(dict(reversed(post.items())), random.Random(7))
    assert first == again  # operator order does not matter, only the seed
    assert first != thompson(post, random.Random(8))
    assert all(0 <= w <= 2 for w in first.values())
    assert first["Relu"] > 1.5 and first["Add"] < 0.5


def test_top_weights_heaviest_first_ties_by_name() -> None:
    assert top_weights({"b": 1.0, "a": 1.0, "c": 2.0, "d": 0.1}, 3) == [("c", 2.0), ("a", 1.0), ("b", 1.0)]


def test_a_model_alone_in_its_epoch_teaches_nothing_yet() -> None:
    outcomes = [_o("a", 3, ("Relu",)), _o("b", 0, ("Add",)), _o("c", 9, ("Relu", "Mul"), epoch=1)]
    assert successes(outcomes) == {"a": True, "b": False}
    post = posterior(outcomes)
    assert post == {"Add": Posterior(1, 2), "Relu": Posterior(2, 1)}


def test_the_attribute_posterior_credits_the_values_a_model_was_made_with() -> None:
    outcomes = [ModelOutcome("a", 1, ("Relu",), (), 5.0, ("nodes=more", "kernel=3")),
                ModelOutcome("b", 1, ("Relu",), (), 0.0, ("nodes=fewer",)),
                ModelOutcome("c", 1, ("Add",), (), 1.0, ("nodes=more",))]
    post = posterior(outcomes, arm="attributes")
    # median 1: a succeeds, b and c fail
    assert post == {"kernel=3": Posterior(2, 1), "nodes=fewer": Posterior(1, 2), "nodes=more": Posterior(2, 2)}
    assert posterior([_o("x", 1, ("Relu",)), _o("y", 0, ("Add",))], arm="attributes") == {}  # a pool given's
