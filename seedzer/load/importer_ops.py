"""The operators TVM's ONNX importer converts: the keys of its converter map, read from the installed
TVM at run time (``tvm.relax.frontend.onnx.onnx_frontend._get_convert_map()``), never kept by hand.

A process that imported TVM already (a worker) reads the map directly; any other (the campaign,
``status``, ``pool stats``), which never imports TVM, asks a child Python once (a few seconds) and
remembers the answer. :class:`OperatorReach` is what every report shows: "importer operators
exercised N of M", with the operators never exercised.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

IMPORTER_MODULE = "tvm.relax.frontend.onnx.onnx_frontend"
"""The module holding TVM's ONNX converter map."""
_CHILD = ("import json\nfrom tvm.relax.frontend.onnx import onnx_frontend as f\n"
          "print(json.dumps(sorted(f._get_convert_map())))\n")


def _read_here() -> tuple[str, ...]:
    from tvm.relax.frontend.onnx import onnx_frontend

    return tuple(sorted(onnx_frontend._get_convert_map()))


@functools.lru_cache(maxsize=1)
def importer_operators() -> tuple[str, ...]:
    """The ONNX operator types TVM's importer converts, sorted (empty when TVM cannot be imported)."""
    if IMPORTER_MODULE in sys.modules or "tvm" in sys.modules:
        try:
            return _read_here()
        except Exception:  # a TVM without the ONNX frontend
            return ()
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=300,
                              check=False)
        return tuple(json.loads(done.stdout.strip().splitlines()[-1])) if done.returncode == 0 else ()
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return ()


OPERATOR_FEATURE = "onnx-op/"
"""Prefix of the coverage feature naming an operator type of a model handed to TVM's importer (the
graph level reports one per operator of every model it imports; campaign.db keeps them)."""


@dataclass(frozen=True)
class OperatorReach:
    """How many of the importer's operators some models exercised (carried, for a pool)."""

    importer: tuple[str, ...]
    """The operators TVM's importer converts (:func:`importer_operators`)."""
    exercised: frozenset[str]
    """The operator types the models had (those the importer does not convert included)."""

    @property
    def covered(self) -> list[str]:
        """The importer's operators exercised, sorted."""
        return sorted(set(self.importer) & self.exercised)

    @property
    def missing(self) -> list[str]:
        """The importer's operators never exercised, sorted."""
        return sorted(set(self.importer) - self.exercised)

    def summary(self) -> str:
        """``N of M (P%)`` (``unknown`` without TVM's list)."""
        if not self.importer:
            return "unknown (TVM's ONNX importer cannot be imported)"
        share = 100.0 * len(self.covered) / len(self.importer)
        return f"{len(self.covered)} of {len(self.importer)} ({share:.0f}%)"

    def line(self, verb: str = "exercised") -> str:
        """``importer operators exercised N of M (P%)``."""
        return f"importer operators {verb} {self.summary()}"


def operator_reach(exercised: Iterable[str], importer: Sequence[str] | None = None) -> OperatorReach:
    """The reach of operator types ``exercised`` (default importer: the installed TVM's)."""
    return OperatorReach(tuple(importer if importer is not None else importer_operators()), frozenset(exercised))


def operators_of(features: Iterable[str]) -> set[str]:
    """The operator types among coverage features (``onnx-op/<type>``)."""
    return {f[len(OPERATOR_FEATURE):] for f in features if f.startswith(OPERATOR_FEATURE)}
