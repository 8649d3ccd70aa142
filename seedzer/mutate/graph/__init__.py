"""The graph level's model mutations: MT-DLComp's UOC and PIOC, spec-edge changes and operator insertions
of TVM's importer, sampled TVM-free (each record is replayed by :mod:`seedzer.kernel.graph`)."""
