"""The worker's quick parse gives the very PrimFunc TVM's own parse gives, on seeds and on mutants."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

tvm = pytest.importorskip("tvm")
import tvm_ffi  # noqa: E402

from seedzer.kernel.tir.lowering import parse_func  # noqa: E402
from seedzer.levels.tir.parsing import parser_names, quick_parser  # noqa: E402
from seedzer.mutate.tir import default_ir_mutators, mutate_ir  # noqa: E402
from seedzer.tvmio import script_of  # noqa: E402

SEEDS = sorted((Path(__file__).parent.parent / "fixtures" / "seeds").glob("*.py"))
QUICK = quick_parser()  # one parser for every script, as a worker uses it


def _same(script: str) -> None:
    plain, quick = parse_func(script), QUICK(script)
    assert tvm_ffi.structural_equal(plain, quick, map_free_vars=False)
    assert tvm_ffi.structural_hash(plain) == tvm_ffi.structural_hash(quick)
    assert str(plain.attrs) == str(quick.attrs)
    assert script_of(quick) == script_of(plain)


@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
def test_a_seed_parses_to_the_same_primfunc(path: Path) -> None:
    _same(path.read_text())


def test_mutants_parse_to_the_same_primfunc() -> None:
    rng = random.Random(7)
    mutators = default_ir_mutators()
    checked = 0
    for path in SEEDS:
        found = mutate_ir(parse_func(path.read_text()), rng, mutators)
        if found is not None:
            _same(script_of(found[0]))
            checked += 1
    assert checked >= len(SEEDS) // 2


def test_the_decorator_stand_in_carries_tvms_dispatch_token_and_nothing_else_changes() -> None:
    from tvm.script.parser.core.entry import _default_globals

    names, own = parser_names(), _default_globals()
    assert names is not None
    assert names["T"].prim_func(s_tir=True).dispatch_token == own["T"].prim_func.dispatch_token
    assert names["T"].Buffer is own["T"].Buffer and names["tir"] is names["T"]
    assert {k: v for k, v in names.items() if k not in ("T", "tir")} == {k: v for k, v in own.items()
                                                                          if k not in ("T", "tir")}


def test_a_broken_script_fails_as_tvms_parse_does() -> None:
    script = SEEDS[0].read_text().replace("T.Buffer", "T.NoSuchThing", 1)
    with pytest.raises(Exception) as plain:
        parse_func(script)
    with pytest.raises(Exception) as quick:
        QUICK(script)
    assert type(quick.value) is type(plain.value)
