"""The plain reproducer of a finding (``minimal.py`` beside ``repro.py``): a short program a TVM maintainer
reads in a minute, with only ``tvm`` and ``numpy`` (and ``onnx``/``onnxruntime`` where the model or
onnxruntime is part of the bug), no Seedzer code.

The house holds what every kind shares: the record of a plain reproducer (:mod:`.program`), the text
pieces every one is made of (:mod:`.text`), running one in a forked child while it is being made
smaller (:mod:`.harness`), running it in a fresh virtual environment (:mod:`.verify`), ONNX models as
``onnx.helper`` code (:mod:`.onnx_code`), the validity of a model by ONNX's checker, onnxruntime and
``onnx.reference`` (:mod:`.onnx_validity`) and shrinking a printed Relax module (:mod:`.relax_shrink`).
Each kind makes its own (``seedzer/finding/<kind>/minimal_repro.py``).
"""
