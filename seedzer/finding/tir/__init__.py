"""The TIR finding kind: a TIR PrimFunc and its flat pass steps that make TVM fail.

Its folder (:mod:`~seedzer.finding.tir.folder`), its gate's rules
(:mod:`~seedzer.finding.tir.gate`, with the culprit bisection and the hang-size check), its
reducer passes (:mod:`~seedzer.finding.tir.reduce`, the house's :mod:`~seedzer.finding.shrink_ir`)
and its seam (:mod:`~seedzer.finding.tir.kind`); its ``repro.py`` carries
:mod:`seedzer.kernel.tir.observe`.
"""
