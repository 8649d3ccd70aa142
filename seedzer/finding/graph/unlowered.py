"""Operators TVM's legalization leaves unlowered on purpose: a documented limitation, not a bug.

``relax.LegalizeOps`` returns some calls unchanged by design: a convolution whose data or kernel layout
has a channel chunk (a packed layout such as ``NHWC4c``/``OHWI4o``, which ``relax.ConvertLayout`` makes on
request) "cannot be legalized by TOPI at this moment" (``python/tvm/relax/transform/legalize_ops/nn.py``,
``_nn_conv1d``/``_nn_conv2d``/``_nn_conv3d``); upstream keeps the passthrough for external code generators.
``tvm.compile`` then stops in VM code generation ("CodeGenVM cannot emit this Relax operator directly"),
whose message prints the offending call. :func:`unlowered_on_purpose` reads that call and says why it was
left unlowered when one of :data:`REFUSALS` applies to it (an invalid test case, not the pass's bug).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CODEGEN_VM = "CodeGenVM cannot emit this Relax operator directly"
"""VM code generation's error for a high-level call nothing lowered (the offending call follows)."""
_OFFENDING = re.compile(r"Offending call:\s*R\.([\w.]+)\((.*)", re.DOTALL)
_LAYOUT = re.compile(r"\b(data_layout|kernel_layout|out_layout)=\"(\w+)\"")
UNLOWERED = "unsupported by TVM's lowering"
"""How the reason of a test case whose call TVM's legalization leaves unlowered on purpose starts."""


@dataclass(frozen=True)
class Refusal:
    """The Relax operator ``op`` (``relax.nn.conv2d``) is left unlowered when its data or kernel layout has
    more than ``axes`` letters (a channel chunk: a packed layout), as ``source`` says."""

    op: str
    axes: int
    source: str

    def applies(self, layouts: dict[str, str]) -> bool:
        """Whether the call's layouts are packed (its data or kernel layout has a chunk)."""
        return any(len(layouts.get(k, "")) > self.axes for k in ("data_layout", "kernel_layout"))


_NN = "python/tvm/relax/transform/legalize_ops/nn.py"
REFUSALS: tuple[Refusal, ...] = (
    Refusal("relax.nn.conv1d", 3, f"{_NN} _nn_conv1d: \"Conv1D where data layout or kernel layout have channel "
            "chunk cannot be legalized by TOPI at this moment\""),
    Refusal("relax.nn.conv2d", 4, f"{_NN} _nn_conv2d: \"Conv2D where data layout or kernel layout have channel "
            "chunk cannot be legalized by TOPI at this moment\""),
    Refusal("relax.nn.conv3d", 5, f"{_NN} _nn_conv3d: \"Conv3D where data layout or kernel layout have channel "
            "chunk cannot be legalized by TOPI at this moment\""),
)
"""The legalization's deliberate refusals of packed layouts, per operator."""


def unlowered_on_purpose(message: str) -> str | None:
    """Why the call VM code generation could not emit was left unlowered on purpose (a row of :data:`REFUSALS`
    applies to its layouts), or None (another call, or another message)."""
    if CODEGEN_VM not in message:
        return None
    found = _OFFENDING.search(message)
    if found is None:
        return None
    op = f"relax.{found.group(1)}"
    layouts = dict(_LAYOUT.findall(found.group(2).split("\n", 1)[0]))
    row = next((r for r in REFUSALS if r.op == op and r.applies(layouts)), None)
    if row is None:
        return None
    packed = "/".join(layouts[k] for k in ("data_layout", "kernel_layout") if k in layouts)
    return f"LegalizeOps leaves {op} in a packed layout ({packed}) unlowered on purpose ({row.source}), so VM code " \
           "generation cannot emit it"
