"""The converter whose output is first ill-typed, found with the installed TVM on small models: SplitToSequence
into one chunk returns a tensor where ONNX has a sequence, and whichever converter reads it fails."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from seedzer.finding.onnx_types import SEQUENCE_FOR_TENSOR, ill_typed_forked, ill_typed_input

pytestmark = pytest.mark.integration
pytest.importorskip("tvm")


def _split_one_chunk(consumer: str) -> bytes:
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=1)]
    inits = []
    if consumer == "SequenceAt":
        nodes.append(helper.make_node("SequenceAt", ["s", "p"], ["y"]))
        inits.append(numpy_helper.from_array(np.array(0, np.int64), "p"))
        out = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    else:
        nodes.append(helper.make_node("SequenceLength", ["s"], ["y"]))
        out = helper.make_tensor_value_info("y", TensorProto.INT64, [])
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])], [out],
                              initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("consumer", ["SequenceAt", "SequenceLength"])
def test_split_to_sequence_of_one_chunk_is_found_whichever_converter_reads_it(consumer: str) -> None:
    found = ill_typed_forked(_split_one_chunk(consumer), consumer)
    assert found is not None and found.converter == "relax.frontend.onnx.SplitToSequence._impl_v11"
    assert found.mistake == SEQUENCE_FOR_TENSOR and found.value == "s"


def test_a_consumer_whose_inputs_are_typed_as_onnx_types_them_finds_nothing() -> None:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    assert ill_typed_input(data, "Neg") is None
