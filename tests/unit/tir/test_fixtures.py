"""The fixture seeds in ``tests/fixtures/seeds/`` and the recipe that produced them.

Each fixture is the TVMScript of one PrimFunc that ``relax.transform.LegalizeOps`` (or, for the fused
one, LegalizeOps + FuseOps + FuseTIR) made from a tiny Relax function. Run this file as a script
(``python tests/unit/tir/test_fixtures.py --write``) to regenerate them; the tests check that
the files still parse, verify and match what the recipe produces on the installed TVM.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

tvm = pytest.importorskip("tvm") if __name__ != "__main__" else __import__("tvm")
import tvm_ffi  # noqa: E402
from tvm import relax, tirx  # noqa: E402

SEED_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "seeds"


def _t(shape: tuple[int, ...], dtype: str = "float32") -> Any:
    return relax.TensorType(shape, dtype)


R = relax.op

# name -> (input types, relax builder)
CASES: dict[str, tuple[list[Any], Callable[..., Any]]] = {
    "relu": ([_t((1, 4, 8, 8))], lambda x: R.nn.relu(x)),
    "add_broadcast": ([_t((2, 3, 4)), _t((3, 1))], lambda a, b: R.add(a, b)),
    "conv2d": ([_t((1, 2, 6, 6)), _t((3, 2, 3, 3))], lambda x, w: R.nn.conv2d(x, w, padding=1)),
    "matmul": ([_t((4, 5)), _t((5, 3))], lambda a, b: R.matmul(a, b)),
    "sum": ([_t((3, 4, 5))], lambda x: R.sum(x, axis=[1], keepdims=False)),
    "max_pool2d": ([_t((1, 2, 6, 6))], lambda x: R.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2))),
    "softmax": ([_t((2, 7))], lambda x: R.nn.softmax(x, axis=-1)),
    "transpose": ([_t((2, 3, 4))], lambda x: R.permute_dims(x, [2, 0, 1])),
    "argmax": ([_t((3, 5))], lambda x: R.argmax(x, axis=1)),
    "fused_matmul_add_relu": (
        [_t((4, 6)), _t((6, 5)), _t((5,))],
        lambda x, w, b: R.nn.relu(R.add(R.matmul(x, w), b)),
    ),
}


def build_seed(name: str) -> Any:
    """Lower the named tiny Relax function to its single PrimFunc (named ``main``)."""
    types, fn = CASES[name]
    bb = relax.BlockBuilder()
    xs = [relax.Var(f"x{i}", t) for i, t in enumerate(types)]
    with bb.function("main", xs):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(fn(*xs)))
        bb.emit_func_output(out)
    passes = [relax.transform.LegalizeOps()]
    if name.startswith("fused_"):
        passes += [
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FuseOps(),
            relax.transform.FuseTIR(),
            relax.transform.DeadCodeElimination(),
        ]
    mod = tvm.transform.Sequential(passes)(bb.get())
    funcs = [f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc)]
    assert len(funcs) == 1, f"{name}: expected one PrimFunc, got {len(funcs)}"
    return funcs[0].with_attr("global_symbol", "main")


def load_seeds() -> dict[str, Any]:
    """Every fixture seed, parsed, by file stem (shared by the other mutate tests)."""
    from seedzer.tvmio import parse_primfunc

    return {p.stem: parse_primfunc(p.read_text()) for p in sorted(SEED_DIR.glob("*.py"))}


def write_all() -> None:
    """Regenerate every fixture file."""
    SEED_DIR.mkdir(parents=True, exist_ok=True)
    for name in CASES:
        (SEED_DIR / f"{name}.py").write_text("# ruff: noqa\n" + str(build_seed(name).script()) + "\n")


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_matches_recipe(name: str) -> None:
    """The stored fixture parses, is well-formed, and equals what the recipe produces."""
    from seedzer.tir.wellformed import check_well_formed
    from seedzer.tvmio import parse_primfunc

    stored = parse_primfunc((SEED_DIR / f"{name}.py").read_text())
    assert check_well_formed(stored) is None
    assert tvm_ffi.structural_equal(stored, build_seed(name), map_free_vars=True)


if __name__ == "__main__":
    if "--write" in sys.argv:
        write_all()
        print(f"wrote {len(CASES)} seeds to {SEED_DIR}")
    else:
        print(__doc__)
