"""The load finding kind: an ONNX model that TVM's importer, lowering or build rejects, crashes on
or gets wrong against onnxruntime.

Its folder (:mod:`~seedzer.finding.load.folder`), its gate's rules (:mod:`~seedzer.finding.load.gate`),
the house's ONNX graph reduction (:mod:`~seedzer.finding.onnx_reduce`), what ``seedzer load
--out`` writes (:mod:`~seedzer.commands.load_output`, :mod:`~seedzer.commands.load_report`) and its
seam (:mod:`~seedzer.finding.load.kind`); its ``repro.py`` carries :mod:`seedzer.kernel.load.observe`.
"""
