"""Turn an NNSmith graph into weights, inputs and an ONNX model, deterministically.

NNSmith's ``refine_weights`` bounds its weight/input search by wall-clock time (20 ms), so the
weights it keeps depend on machine load. This is the same search (random weight sample, then
gradient search on differentiable graphs or plain sampling otherwise) bounded by iteration counts
instead, so a seed always gives the same model.
"""

from __future__ import annotations

from typing import Any

import torch
from nnsmith.error import ConstraintError
from nnsmith.materialize.torch.input_gen import InputSearchBase, PracticalHybridSearch, SamplingSearch
from nnsmith.materialize.torch.symbolnet import random_tensor

SEARCH_TRIES = 2
GRAD_ITERATIONS = 8
_NAN_MSG = ("[NaN] in model inputs!", "[Inf] in model inputs!")


def _grad_search(net: Any, start: dict[str, torch.Tensor], iterations: int) -> dict[str, torch.Tensor] | None:
    """NNSmith's ``SymbolNet.grad_input_gen`` with an iteration bound in place of a time bound."""
    inputs: dict[str, torch.Tensor] = {}
    for key, tensor in start.items():
        if tensor.data.dtype.is_floating_point:
            inputs[key] = torch.nn.parameter.Parameter(tensor.data.clone())
        else:
            inputs[key] = tensor.data
    net.enable_training(extra_trainable=inputs)
    saved_check = net.check_intermediate_numeric
    net.check_intermediate_numeric = True
    net.iter_num = 0
    net.cur_loss_name = None
    found = None
    try:
        for _ in range(iterations):
            net.training_reset()
            net.iter_num += 1
            try:
                net(**inputs)
                if not net.invalid_found_last:
                    found = {k: v.data for k, v in inputs.items()}
                    break
                net.backward()
            except AttributeError:  # NNSmith's backward() calls a missing torch.dtype.torch() on NaN weights
                break
            except ConstraintError as exc:
                if not any(m in str(exc) for m in _NAN_MSG):
                    break
                with torch.no_grad():  # flush NaN/Inf inputs, as NNSmith does
                    for inp in inputs.values():
                        bad = inp.isnan().logical_or(inp.isinf())
                        inp.copy_(torch.where(bad, random_tensor(inp.shape, inp.dtype), inp))
    finally:
        net.stop_training()
        net.check_intermediate_numeric = saved_check
    return found


def refine(model: Any, tries: int = SEARCH_TRIES, iterations: int = GRAD_ITERATIONS) -> None:
    """Pick weights and inputs that avoid NaN/Inf where possible, then export the ONNX model.

    ``model`` is an ``nnsmith.materialize.onnx.ONNXModel`` fresh from ``from_gir``. Afterwards
    ``model.onnx_model`` holds the exported graph and ``model.sat_inputs`` the inputs (or None).
    """
    net = model.torch_model
    net.enable_proxy_grad()
    try:
        searcher = PracticalHybridSearch(net)
        for _ in range(tries):
            sample = {name: random_tensor(p.shape, dtype=p.dtype) for name, p in net.named_parameters()}
            InputSearchBase.apply_weights(net, sample)
            start = net.get_random_inps()
            if searcher.differentiable:
                found = _grad_search(net, start, iterations)
            else:
                found = SamplingSearch.search_one(searcher, start)
            if found is not None:
                model.sat_inputs = found
                break
    finally:
        net.disable_proxy_grad()
    model.onnx_model = model.get_onnx_from_torch()
