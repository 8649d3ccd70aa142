"""The test-case kernel: the code that runs one test case, shared by every executor.

The fuzz workers, the filing gate, the reducer, ``replay`` and every standalone ``repro.py`` run
the same functions. A kernel module depends on the standard library, ``numpy`` and the engines
under test only (``tvm``; ``onnx``/``onnxruntime`` for loader cases), never on the rest of Seedzer,
because its code below the marker line is copied verbatim into each reproducer, in this order:

- :mod:`seedzer.kernel.comparison`: the one output comparison and its
  :class:`~seedzer.kernel.comparison.Difference`;
- :mod:`seedzer.kernel.common`: symptoms, stages, flat pass steps, cases and the
  :class:`~seedzer.kernel.common.Observation` every executor returns;
- :mod:`seedzer.kernel.messages`: an error's identity (its normalized key line) and whether an
  observation is the expected failure;
- :mod:`seedzer.kernel.lowlevel`: a PrimFunc through flat steps, build, run, compare, time;
- :mod:`seedzer.kernel.loader`: an ONNX model through TVM's importer, lowering, build and run,
  against onnxruntime;
- :mod:`seedzer.kernel.graph_case`, :mod:`seedzer.kernel.relax_build` (the Relax-building toolkit),
  :mod:`seedzer.kernel.relax_mutations` and
  :mod:`seedzer.kernel.graph` (after the loader kernel, in a graph finding's reproducer): the graph
  level's case, its Relax IR mutations, and a model through a Relax pass sequence, built and
  compared with TVM's default pipeline.
"""

MARKER = "# --- kernel code (everything below is copied verbatim into repro.py) ---"
"""The line after which a kernel module's text is copied into reproducers."""
