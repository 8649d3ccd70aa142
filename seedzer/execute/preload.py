"""Imported once in the zygote (forkserver) so forked workers start with TVM already loaded."""

from __future__ import annotations

import tvm
import tvm.relax
import tvm.s_tir
import tvm.tirx  # noqa: F401
