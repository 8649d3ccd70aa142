"""The reducer engine on a toy reduction over lists of ints: passes, rounds, statistics, deadline, hook."""

from __future__ import annotations

from seedzer.finding.reducer import (
    PassStats,
    Reducer,
    ReductionPass,
    Trial,
    defines_pass,
    passes_of,
    stats_from_json,
    stats_table,
    stats_to_json,
)

Ints = tuple[int, ...]


class ToyPasses:
    """Delete one element at a time; halve one value at a time (both greedy, first success taken)."""

    @defines_pass("delete-one")
    def delete_one(self, xs: Ints, trial: Trial[Ints]) -> Ints | None:
        i = 0
        while i < len(trial.current) and not trial.out_of_time():
            cur = trial.current
            if not trial(cur[:i] + cur[i + 1 :]):
                i += 1
        return trial.current

    @defines_pass("halve")
    def halve(self, xs: Ints, trial: Trial[Ints]) -> Ints | None:
        for i in range(len(xs)):
            cur = trial.current
            if cur[i] > 1:
                trial((*cur[:i], cur[i] // 2, *cur[i + 1 :]))
        return trial.current


def interesting(xs: Ints) -> bool:
    """Two elements or more summing to at least 10."""
    return len(xs) >= 2 and sum(xs) >= 10


def size(xs: Ints) -> dict[str, int]:
    return {"items": len(xs), "total": sum(xs)}


def test_passes_are_declared_in_order() -> None:
    assert [p.name for p in passes_of(ToyPasses())] == ["delete-one", "halve"]


def test_a_toy_reduction_reaches_a_minimal_list_with_per_pass_stats() -> None:
    seen: list[Ints] = []
    engine = Reducer(passes_of(ToyPasses()), interesting, size, on_improvement=seen.append)
    out = engine.run((1, 9, 3, 20, 2))
    assert out.complete and out.state == (10, 1)  # 20 halved once more would sum to 6
    assert interesting(out.state)
    assert seen and seen[-1] == out.state  # the hook saw every accepted state, the last one last
    delete, halve = engine.stats["delete-one"], engine.stats["halve"]
    assert delete.successes + halve.successes == len(seen)
    assert delete.size_removed["items"] == 3 and halve.size_removed["items"] == 0
    assert delete.size_removed["total"] + halve.size_removed["total"] == 35 - 11
    assert delete.useful and halve.useful
    assert delete.tests + halve.tests == engine.tests


def test_rounds_stop_after_a_round_without_progress() -> None:
    engine = Reducer(passes_of(ToyPasses()), interesting, size)
    out = engine.run((1, 9, 3, 20, 2))
    assert out.rounds == engine.rounds >= 2
    assert all(s.calls == out.rounds for s in engine.stats.values())  # the last round found nothing
    assert Reducer(passes_of(ToyPasses()), interesting, size).run((5, 5)).rounds == 1


def test_max_rounds_bounds_the_rounds() -> None:
    out = Reducer(passes_of(ToyPasses()), interesting, size, max_rounds=1).run((1, 9, 3, 20, 2))
    assert out.rounds == 1 and out.complete


def test_the_deadline_stops_with_the_best_so_far() -> None:
    ticks = iter(range(1000))
    calls: list[Ints] = []

    def test(xs: Ints) -> bool:
        calls.append(xs)
        return interesting(xs)

    engine = Reducer(passes_of(ToyPasses()), test, size, deadline=4, clock=lambda: float(next(ticks)))
    out = engine.run((1, 9, 3, 20, 2))
    assert not out.complete
    assert 0 < len(calls) <= 4 and interesting(out.state) and len(out.state) < 5


def test_a_pass_cut_short_by_the_deadline_leaves_the_reduction_unfinished() -> None:
    def stops(xs: Ints, trial: Trial[Ints]) -> Ints | None:
        return None if trial.out_of_time() else xs

    engine = Reducer([ReductionPass("stops", stops)], interesting, size, deadline=0.0, clock=lambda: 1.0)
    assert not engine.run((5, 5)).complete


def test_tests_are_memoized_on_a_key() -> None:
    calls: list[Ints] = []

    def test(xs: Ints) -> bool:
        calls.append(xs)
        return interesting(xs)

    engine = Reducer(passes_of(ToyPasses()), test, size, key=lambda xs: xs)
    engine.run((1, 9, 3, 20, 2))
    assert len(calls) == len(set(calls)) == engine.tests


def test_a_resumed_reduction_adds_to_earlier_stats_and_they_round_trip_through_json() -> None:
    first = Reducer(passes_of(ToyPasses()), interesting, size)
    first.run((1, 9, 3, 20, 2))
    saved = stats_to_json(first.stats)
    loaded = stats_from_json(saved)
    assert loaded == {name: PassStats.from_json(s) for name, s in saved.items()}
    assert loaded["delete-one"].successes == first.stats["delete-one"].successes
    again = Reducer(passes_of(ToyPasses()), interesting, size, stats=loaded)
    again.run((5, 5))
    assert again.stats["delete-one"].calls == first.stats["delete-one"].calls + 1
    assert loaded["delete-one"].calls == first.stats["delete-one"].calls  # the earlier stats are not changed
    assert stats_from_json(None) == {} and stats_from_json({"x": "junk"}) == {"x": PassStats()}


def test_the_markdown_table_marks_useful_and_useless_passes() -> None:
    engine = Reducer([*passes_of(ToyPasses()), ReductionPass("nothing", lambda xs, trial: None)], interesting, size)
    engine.run((1, 9, 3, 20, 2))
    table = stats_table(engine.stats)
    lines = table.splitlines()
    assert lines[0].startswith("| Pass | Calls | Successes | Size removed |")
    assert "| `delete-one` |" in lines[2] and lines[2].endswith("| useful |")
    assert "3 items" in lines[2]
    assert lines[-1].startswith("| `nothing` |") and lines[-1].endswith("| useless |")
