"""ddmin (pure): minimality, order preservation, the empty list, and the time bound."""

from __future__ import annotations

from seedzer.finding.ddmin import ddmin, split


def test_split_makes_near_equal_contiguous_chunks() -> None:
    assert split(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert split([1, 2], 5) == [[1], [2]]


def test_ddmin_finds_the_two_needed_items_in_order() -> None:
    calls: list[list[int]] = []

    def test(xs: list[int]) -> bool:
        calls.append(xs)
        return 3 in xs and 9 in xs

    assert ddmin(list(range(16)), test) == [3, 9]
    assert all(xs == sorted(xs) for xs in calls)  # sub-lists keep the original order


def test_ddmin_result_is_one_minimal() -> None:
    def test(xs: list[int]) -> bool:
        return sum(xs) >= 10

    out = ddmin([1, 2, 3, 4, 5, 6], test)
    assert test(out)
    assert all(not test(out[:i] + out[i + 1 :]) for i in range(len(out)))


def test_ddmin_returns_empty_when_nothing_is_needed_and_keeps_everything_needed() -> None:
    assert ddmin([1, 2, 3], lambda xs: True) == []
    assert ddmin([1, 2, 3], lambda xs: xs == [1, 2, 3]) == [1, 2, 3]


def test_ddmin_stops_when_out_of_time_with_a_passing_list() -> None:
    seen = []

    def test(xs: list[int]) -> bool:
        seen.append(1)
        return 0 in xs

    out = ddmin(list(range(64)), test, out_of_time=lambda: len(seen) >= 3)
    assert 0 in out and len(out) < 64
