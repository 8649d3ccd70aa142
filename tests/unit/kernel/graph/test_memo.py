"""The graph kernel's memo: it keeps a pool's models across test cases, and forgets beyond its size."""

from __future__ import annotations

import numpy as np

from seedzer.kernel.graph.memo import MEMO_SIZE, GraphMemo


def test_a_pool_of_forty_models_is_remembered_in_random_order() -> None:
    memo = GraphMemo()
    rng = np.random.default_rng(0)
    for name in (f"model-{i}" for i in range(40)):
        memo.put(memo.defaults, name, [np.zeros(1)])
        memo.put(memo.imported, name, name)
    for i in rng.integers(0, 40, size=200):  # a scheduler's draws over the pool: every one remembered
        assert memo.get(memo.imported, f"model-{i}") == f"model-{i}"
        assert memo.get(memo.defaults, f"model-{i}") is not None


def test_the_least_recently_used_is_forgotten_beyond_the_size() -> None:
    memo = GraphMemo(size=2)
    memo.put(memo.refusals, "a", "")
    memo.put(memo.refusals, "b", "no")
    assert memo.get(memo.refusals, "a") == ""  # now the most recent
    memo.put(memo.refusals, "c", "")
    assert memo.get(memo.refusals, "b") is None and memo.get(memo.refusals, "a") == ""
    assert MEMO_SIZE >= 64
