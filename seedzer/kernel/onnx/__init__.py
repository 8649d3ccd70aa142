"""The kernel's ONNX wing: an ONNX model on onnxruntime (:mod:`.runtime`) and through TVM's importer,
build and Relax VM (:mod:`.model`), shared by the load and graph kernels."""
