"""The facts a report states, read from an interpreter."""

from __future__ import annotations

import sys
from importlib import metadata

import pytest

from seedzer.environments.facts import EnvironmentFacts, probe
from seedzer.errors import SeedzerError


def test_this_interpreter_states_its_tvm_commit_and_llvm() -> None:
    facts = probe(sys.executable)
    assert facts.tvm == metadata.version("apache-tvm") and facts.error is None
    assert facts.commit and facts.llvm and facts.python.count(".") == 2
    assert facts.packages["apache-tvm"] == facts.tvm
    assert EnvironmentFacts.from_json(facts.to_json()) == facts


def test_no_interpreter_is_one_line() -> None:
    with pytest.raises(SeedzerError, match="cannot read its environment") as info:
        probe("/bin/false")
    assert "\n" not in str(info.value)
