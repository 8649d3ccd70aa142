"""The kernel's load wing: a pool model through TVM's importer, lowering, build and run, judged
against onnxruntime (:mod:`.observe`): what loading a pool and every ``load`` finding run."""
