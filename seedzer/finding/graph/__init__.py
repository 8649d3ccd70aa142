"""The graph finding kind: an ONNX model through TVM's importer and a fuzzed Relax pass sequence, then
the rest of TVM's pipeline, build and run, fails or disagrees with TVM's default pipeline alone.

Its folder (:mod:`~seedzer.finding.graph.folder`), its gate's rules (:mod:`~seedzer.finding.graph.rules`,
ordered in :mod:`~seedzer.finding.graph.gate`), its reducer passes (:mod:`~seedzer.finding.graph.reduce`:
ddmin over the Relax passes, then the house's ONNX graph reduction), its triage and report
(:mod:`~seedzer.finding.graph.triage`, :mod:`~seedzer.finding.graph.report_md`) and its seam
(:mod:`~seedzer.finding.graph.kind`); its ``repro.py`` carries :mod:`seedzer.kernel.load.observe`,
:mod:`seedzer.kernel.graph.case` and :mod:`seedzer.kernel.graph.observe`.
"""
