"""Imported once in the zygote (forkserver) so forked workers start with TVM already loaded."""

from __future__ import annotations

import tvm  # noqa: F401
import tvm.relax  # noqa: F401
import tvm.s_tir  # noqa: F401
import tvm.tirx  # noqa: F401
