"""Calls TVM's legalization leaves unlowered on purpose, read off VM code generation's error (the real one of the
audited campaign's e3d54fb7e345, and the same error for other calls)."""

from __future__ import annotations

import dataclasses

from seedzer.finding.graph.rules import invalid_reason
from seedzer.finding.graph.unlowered import UNLOWERED, unlowered_on_purpose
from tests.frames import real_failure


def _with_call(call: str) -> str:
    message = real_failure("codegen_vm_packed_conv2d_build").message
    return message.split("Offending call:")[0] + "Offending call:\n" + call


def test_a_packed_conv2d_left_unlowered_is_a_limitation_not_a_bug() -> None:
    observed = real_failure("codegen_vm_packed_conv2d_build")
    why = unlowered_on_purpose(observed.message)
    assert why is not None and "relax.nn.conv2d" in why and "NHWC4c/OHWI4o" in why and "channel chunk" in why
    assert (invalid_reason(observed) or "").startswith(f"{UNLOWERED}: LegalizeOps leaves relax.nn.conv2d")


def test_only_a_call_the_legalization_refuses_on_purpose_is_excused() -> None:
    plain = 'R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI", out_layout="NHWC", out_dtype=None)'
    assert unlowered_on_purpose(_with_call(plain)) is None  # TOPI lowers it: left unlowered, that is a bug
    transpose = 'R.nn.conv2d_transpose(x, w, data_layout="NHWC4c", kernel_layout="IOHW4o", out_layout="NHWC4c")'
    assert unlowered_on_purpose(_with_call(transpose)) is None  # no row says so for conv2d_transpose
    packed_kernel = 'R.nn.conv1d(x, w, data_layout="NCW", kernel_layout="OIW4o", out_layout="NCW")'
    assert unlowered_on_purpose(_with_call(packed_kernel)) is not None
    crashed = dataclasses.replace(real_failure("codegen_vm_packed_conv2d_build"), message="killed by SIGSEGV")
    assert unlowered_on_purpose(crashed.message) is None
