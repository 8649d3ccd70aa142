"""The kernel's graph wing: the graph level's case (:mod:`.case`), its ONNX model mutations
(:mod:`.model_mutations`), the Relax-building toolkit and IR mutations (:mod:`.relax_build`,
:mod:`.relax_mutations`) and a model through a Relax pass sequence, built and judged (:mod:`.observe`)."""
