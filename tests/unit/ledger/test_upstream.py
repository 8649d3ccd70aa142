"""The table of known upstream bugs: the shipped rows, the typed loader's one-line errors, what a fingerprint
matches, and a user's row made from a reported root."""

from __future__ import annotations

import pytest

from seedzer.errors import ConfigError
from seedzer.finding.known_upstream import parse_table, shipped
from seedzer.ledger.upstream import (
    Fingerprint,
    ReportedRoot,
    RootFacts,
    UpstreamIssue,
    dump_table,
    issue_link,
    match,
    merged,
)


def test_every_shipped_row_says_how_it_was_checked_and_names_a_real_tvm_issue() -> None:
    rows = shipped()
    assert len(rows) >= 5 and len({r.name for r in rows}) == len(rows)
    assert all(r.repo == "apache/tvm" and r.checked.strip() and r.title for r in rows)
    assert "apache/tvm#19579" in {r.name for r in rows}


def test_the_nan_that_max_and_min_lose_is_19579_and_signs_is_19543() -> None:
    table = shipped()
    nan = RootFacts("r1", "graph", "mismatch", "codegen.llvm.max_min", "output 0: nan positions", "nan")
    found = match(table, nan)
    assert found is not None and found.number == 19579 and found.note() == "known upstream apache/tvm#19579 (open)"
    sign = match(table, RootFacts("r2", "graph", "mismatch", "relax.frontend.onnx.Sign", "...", "nan"))
    assert sign is not None and sign.number == 19543
    identity = RootFacts("r3", "graph", "mismatch", "tirx.op.min_max_reduction_identity", "...", "inf")
    assert match(table, identity) is None
    assert match(table, RootFacts("r4", "graph", "mismatch", "relax.frontend.onnx.Sign", "...", "")) is None


def test_a_fingerprint_holds_on_every_field_it_gives() -> None:
    printed = Fingerprint(code=r"topi\.image\.grid_sample", message="Divide by zero")
    facts = RootFacts("r", "graph", "exception", "topi.image.grid_sample", "Check failed: Divide by zero")
    assert printed.matches(facts)
    assert not printed.matches(RootFacts("r", "graph", "exception", "topi.image.grid_sample_x", "Divide by zero"))
    assert not printed.matches(RootFacts("r", "graph", "exception", "topi.image.grid_sample", "other"))
    assert Fingerprint(roots=("r",)).matches(facts) and not Fingerprint(roots=("q",)).matches(facts)


def test_a_table_round_trips_and_a_later_row_replaces_an_earlier_one() -> None:
    rows = shipped()
    assert parse_table(dump_table(rows), "export") == rows
    mine = UpstreamIssue("apache/tvm", 19579, "mine", "closed", Fingerprint(roots=("r",)), fixed_in="0.28.0")
    table = merged(rows, [mine])
    assert len(table) == len(rows) and next(i for i in table if i.number == 19579).title == "mine"


@pytest.mark.parametrize(("text", "error"), [
    ("[1, 2]", "not an upstream table"),
    ("issues: [3]", "row 1: a row must be a mapping"),
    ("issues: [{number: 0, title: t, state: open, fingerprint: {code: x}}]", "'number' must be a positive integer"),
    ("issues: [{number: 1, title: t, state: maybe, fingerprint: {code: x}}]", "'state' must be one of open, closed"),
    ("issues: [{number: 1, title: t, state: open, fingerprint: {}}]", "the fingerprint names no code"),
    ("issues: [{number: 1, title: t, state: open, fingerprint: {code: '('}}]", "not a regular expression"),
    ("issues: [{number: 1, title: t, state: open, fingerprint: {code: x}, colour: red}]", "unknown field(s) colour"),
    ("issues: [{number: 1, title: t, state: open, fingerprint: {code: x}}, "
     "{number: 1, title: u, state: open, fingerprint: {code: y}}]", "apache/tvm#1 is listed twice"),
])
def test_a_bad_table_is_one_line_naming_the_file_and_row(text: str, error: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_table(text, "t.yaml")
    message = str(info.value)
    assert message.startswith("t.yaml") and error in message and "\n" not in message


def test_a_reported_roots_link_makes_a_row_that_names_the_root() -> None:
    assert issue_link("https://github.com/apache/tvm/issues/19579") == ("apache/tvm", 19579, False)
    assert issue_link("https://github.com/apache/tvm/pull/20409#discussion") == ("apache/tvm", 20409, True)
    assert issue_link("https://example.org/1") is None
    row = ReportedRoot("abc123", "graph", "exception", "relax.ConvertLayout", "exception at ...",
                       "https://github.com/apache/tvm/issues/123").issue()
    assert row is not None and row.name == "apache/tvm#123" and row.fingerprint.roots == ("abc123",)
    assert row.fingerprint.matches(RootFacts("abc123", "graph", "exception", "relax.ConvertLayout", ""))
    assert not row.fingerprint.matches(RootFacts("other1", "graph", "exception", "relax.ConvertLayout", ""))
    assert ReportedRoot("abc123", "graph", "x", "y", "h", "https://example.org/1").issue() is None


def test_a_bisected_culprit_that_starts_with_the_pass_at_fault_matches_its_row() -> None:
    facts = RootFacts("r", "tir", "exception", "tirx.ForceNarrowIndexToInt32 + s_tir.CompactBufferAllocation",
                      "TypeError: Check failed: (a_ty->dtype == b_ty->dtype) is false: mismatched types. "
                      "int64 vs. int32")
    found = match(shipped(), facts)
    assert found is not None and found.number == 20409
