"""The Relax IR mutations in the Relax catalogue (TVM-free): names, JSON-able sampled arguments, weights, contracts."""

from __future__ import annotations

import json
import random
import subprocess
import sys

from seedzer.passes.catalog import PassInfo
from seedzer.passes.graph.catalog import ARGS, RELAX_CATALOG, sample_relax_pass
from seedzer.passes.graph.contracts import (
    CONTRACTS,
    GROUPED,
    INITIAL,
    LEGALIZED,
    NO_DATAFLOW,
    RelaxContract,
    is_mutation,
)
from seedzer.seed import PassSpec

MUTATION_CATALOG = {name: info for name, info in RELAX_CATALOG.items() if is_mutation(name)}
MUTATION_NAMES = tuple(MUTATION_CATALOG)
MUTATION_CONTRACTS = {name: CONTRACTS[name] for name in MUTATION_NAMES}
MUTATION_ARGS = {name: ARGS[name] for name in MUTATION_NAMES}
MUTATION_WEIGHTS = {name: info.weight for name, info in MUTATION_CATALOG.items()}


def sample_mutation(rng: random.Random, names: list[str] | None = None) -> PassSpec:
    """A mutation drawn as the mutators draw a step, among the mutations only."""
    return sample_relax_pass(rng, names or list(MUTATION_NAMES))

EXPECTED = {"mutate.SymbolicShapes", "mutate.SplitDataflow", "mutate.DuplicateFunction", "mutate.TupleOutputs",
            "mutate.PrimArgs", "mutate.LiftConstants"}


def test_every_mutation_has_an_entry_of_the_relax_catalogue_types() -> None:
    assert set(MUTATION_NAMES) == EXPECTED == set(MUTATION_CONTRACTS) == set(MUTATION_ARGS) == set(MUTATION_WEIGHTS)
    assert list(MUTATION_NAMES) == sorted(MUTATION_NAMES)
    for name, info in MUTATION_CATALOG.items():
        contract = CONTRACTS[name]
        assert isinstance(info, PassInfo) and isinstance(contract, RelaxContract)
        assert info.name == contract.name == name and is_mutation(name)
        assert info.weight > 0 and contract.exact and contract.source


def test_sampled_arguments_are_json_able_and_deterministic() -> None:
    for name, info in MUTATION_CATALOG.items():
        required = {a.name for a in info.args if a.required}
        for seed in range(30):
            spec = info.sample(random.Random(seed))
            assert spec == info.sample(random.Random(seed))
            assert spec.name == name and required <= dict(spec.args).keys()
            assert json.loads(json.dumps(spec.to_json())) == spec.to_json()


def test_sample_mutation_reaches_every_mutation() -> None:
    rng = random.Random(7)
    seen = {sample_mutation(rng).name for _ in range(400)}
    assert seen == EXPECTED
    assert sample_mutation(rng, ["mutate.PrimArgs"]).name == "mutate.PrimArgs"


def test_contracts() -> None:
    high = ("mutate.SymbolicShapes", "mutate.DuplicateFunction", "mutate.PrimArgs", "mutate.LiftConstants")
    for name in MUTATION_NAMES:
        contract = MUTATION_CONTRACTS[name]
        assert contract.violation(INITIAL) is None
        assert contract.violation(frozenset({GROUPED})) is None or name != "mutate.TupleOutputs"
        assert contract.after(frozenset({LEGALIZED})) == frozenset({LEGALIZED})
        assert (contract.violation(frozenset({LEGALIZED})) is not None) == (name in high)
    assert MUTATION_CONTRACTS["mutate.SplitDataflow"].violation(frozenset({NO_DATAFLOW})) is not None
    assert MUTATION_CONTRACTS["mutate.TupleOutputs"].violation(frozenset({LEGALIZED, GROUPED, NO_DATAFLOW})) is None
    assert not is_mutation("relax.FoldConstant")


def test_catalogue_stays_tvm_free() -> None:
    code = "import sys, seedzer.passes.graph.catalog; assert 'tvm' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
