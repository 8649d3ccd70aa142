"""The loader finding kind: an ONNX model that TVM's importer, lowering or build rejects, crashes on
or gets wrong against onnxruntime.

Its folder (:mod:`~seedzer.finding.loader.folder`), its gate's rules (:mod:`~seedzer.finding.loader.gate`),
the house's ONNX graph reduction (:mod:`~seedzer.finding.onnx_reduce`), what ``seedzer load
--out`` writes (:mod:`~seedzer.finding.loader.output`, :mod:`~seedzer.finding.loader.funnel`) and its
seam (:mod:`~seedzer.finding.loader.kind`); its ``repro.py`` carries :mod:`seedzer.kernel.load.observe`.
"""
