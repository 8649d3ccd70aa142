"""The pass model: which TIR passes the fuzzer knows and where each may run (TVM-free).

- :mod:`seedzer.passes.catalog`: every TVM 0.27 TIR pass with its argument sampler, and random
  pass sequences;
- :mod:`seedzer.passes.contracts`: the pass contracts that turn a fuzzed pass sequence into the flat
  steps the kernel runs (TVM's pipeline with the passes inserted), used by the worker, the filing
  of findings and the triage gate.
"""
