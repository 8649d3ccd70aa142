"""The pass model: one sub-package per pass family, each a catalogue and its contracts (TVM-free).

- :mod:`seedzer.passes.tir`: every TVM 0.27 TIR pass with its argument sampler, and the contracts that
  plan a fuzzed TIR sequence into TVM's pipeline (the flat steps the kernel runs);
- :mod:`seedzer.passes.graph`: the Relax passes and Relax IR mutations with their samplers, and the
  contracts (phases) that keep a Relax sequence runnable before ``tvm.compile``.

A family's sub-package never imports another family's, and the house imports none (``lint-imports``).
"""
