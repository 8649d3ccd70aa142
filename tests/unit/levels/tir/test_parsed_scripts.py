"""A TIR worker's parsed scripts: corpus entries outlive a stream of mutants."""

from seedzer.levels.tir.parsed_scripts import ParsedScripts


class CountingParse:
    """A parse function that records which scripts it parsed."""

    def __init__(self) -> None:
        self.parsed: list[str] = []

    def __call__(self, script: str) -> str:
        self.parsed.append(script)
        return f"func of {script}"


def test_corpus_entries_outlive_more_mutants_than_the_cache_holds() -> None:
    parse = CountingParse()
    scripts = ParsedScripts(parse, size=4, fresh=2)
    parents = [f"entry {i}" for i in range(4)]
    for n in range(100):  # a campaign: mutate an entry, run the mutant, never keep it
        parent = parents[n % len(parents)]
        assert scripts.get(parent, parent=True) == f"func of {parent}"
        scripts.put(f"mutant {n}", f"func of mutant {n}")
        assert scripts.get(f"mutant {n}") == f"func of mutant {n}"
    assert parse.parsed == parents  # each entry parsed once; no mutant parsed at all
    assert scripts.misses == 4 and scripts.hits == 196


def test_a_kept_mutant_asked_for_as_a_parent_moves_to_the_parents() -> None:
    parse = CountingParse()
    scripts = ParsedScripts(parse, size=4, fresh=1)
    scripts.put("kept", "func of kept")
    assert scripts.get("kept", parent=True) == "func of kept"  # promoted, not parsed
    scripts.put("mutant", "func of mutant")  # the fresh cache (one slot) drops "kept"
    assert scripts.get("kept", parent=True) == "func of kept"
    assert parse.parsed == []


def test_scripts_only_run_stay_in_the_fresh_cache() -> None:
    parse = CountingParse()
    scripts = ParsedScripts(parse, size=1, fresh=1)
    scripts.get("entry", parent=True)
    scripts.get("seed run once")  # parsed into the fresh cache: the parent stays
    scripts.get("entry", parent=True)
    assert parse.parsed == ["entry", "seed run once"]
