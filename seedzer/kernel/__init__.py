"""The test-case kernel: the code that runs one test case, shared by every executor.

The fuzz workers, the filing gate, the reducer, ``replay`` and every standalone ``repro.py`` run
the same functions. A kernel module depends on the standard library, ``numpy`` and the engines
under test only (``tvm``; ``onnx``/``onnxruntime`` for model cases), never on the rest of Seedzer,
because its code below the marker line is copied verbatim into each reproducer. A reproducer carries
the shared modules first, then its kind's chain (:data:`seedzer.finding.repro.SHARED_KERNELS`), each
module needing only those before it:

- shared vocabulary, in this package: :mod:`.comparison` (the one output comparison and its
  :class:`~seedzer.kernel.comparison.Difference`), :mod:`.common` (symptoms, stages, exit statuses
  and the :class:`~seedzer.kernel.common.Observation` every executor returns), :mod:`.messages` (an
  error's identity and whether an observation is the expected failure);
- :mod:`seedzer.kernel.tir`: the TIR level's case and a PrimFunc through flat steps, build, run,
  compare, time;
- :mod:`seedzer.kernel.onnx`: ONNX model plumbing (onnxruntime; TVM's importer, build and VM; the
  step trace), shared by the two wings below;
- :mod:`seedzer.kernel.load`: a pool model through import, lowering, build and run, against onnxruntime;
- :mod:`seedzer.kernel.graph`: the graph level's case, its model and Relax IR mutations, and a model
  through a Relax pass sequence, built and compared with TVM's default pipeline.
"""

MARKER = "# --- kernel code (everything below is copied verbatim into repro.py) ---"
"""The line after which a kernel module's text is copied into reproducers."""
