"""The TIR level: a PrimFunc lowered from a pool model with a TIR pass sequence (:mod:`.level`, the
object the campaign uses; :mod:`.fuzzer`, what a worker runs its test cases with)."""
