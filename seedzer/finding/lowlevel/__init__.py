"""The low-level finding kind: a TIR PrimFunc and its flat pass steps that make TVM fail.

Its folder (:mod:`~seedzer.finding.lowlevel.folder`), its gate's rules
(:mod:`~seedzer.finding.lowlevel.gate`, with the culprit bisection and the hang-size check), its
reducer passes (:mod:`~seedzer.finding.lowlevel.reduce`, :mod:`~seedzer.finding.lowlevel.shrink_ir`)
and its seam (:mod:`~seedzer.finding.lowlevel.kind`); its ``repro.py`` carries
:mod:`seedzer.kernel.tir.observe`.
"""
