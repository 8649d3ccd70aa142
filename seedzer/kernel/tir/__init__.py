"""The kernel's TIR wing: the TIR level's case (:mod:`.case`) and a PrimFunc through its flat pass
steps, built, run, compared and timed (:mod:`.observe`)."""
