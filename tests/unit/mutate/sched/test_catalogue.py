"""The installed Schedule API read at run time: every method classified, the instruction kinds the
kernel knows are the installed ones, and each transforming primitive has a drawer or a reason."""

from __future__ import annotations

from seedzer.kernel.sched.trace import KINDS, TRANSFORMING
from seedzer.mutate.sched.catalogue import GETTER, OTHER, SAMPLER, counts, drawer_table, primitives, schedule_api


def test_the_kinds_the_kernel_knows_are_the_installed_apis() -> None:
    recorded = {m.kind for m in schedule_api() if m.kind is not None}
    assert recorded == KINDS
    assert {m.kind for m in primitives()} == TRANSFORMING


def test_methods_are_classified_by_what_they_record() -> None:
    roles = {m.name: m.role for m in schedule_api()}
    assert roles["split"] == "transforming" and roles["get_loops"] == GETTER
    assert roles["sample_perfect_tile"] == SAMPLER and roles["can_decompose_padding"] == OTHER
    assert roles["copy"] == OTHER and roles["enter_postproc"] == "postproc-mark"
    found = counts()
    assert found["methods"] == sum(v for k, v in found.items() if k != "methods")
    assert found["transforming"] == len(TRANSFORMING)


def test_the_drawer_table_covers_every_primitive_with_a_drawer_or_a_reason() -> None:
    rows = drawer_table()
    assert len(rows) == len(primitives())
    assert all(row.drawn != bool(row.why_not) for row in rows)
    assert {row.method for row in rows if not row.drawn} == {"bind", "tensorize"}
