"""The graph level: a pool model with its recorded model mutations and a Relax pass sequence
(:mod:`.seed`, the corpus entry's document; :mod:`.level`, the object the campaign uses; :mod:`.fuzzer`,
what a worker runs its test cases with)."""
