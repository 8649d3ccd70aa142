"""The per-operator table (seedzer.mutate.graph.op_table): every role and token it names exists."""

from __future__ import annotations

from seedzer.load.importer_ops import importer_operators
from seedzer.mutate.graph.insert_layers import ROLES
from seedzer.mutate.graph.op_table import DEFAULT_RULE, RULES, USABLE_DTYPES, rule
from seedzer.mutate.graph.schema_draw import DTYPE_ATTRS, NAMED


def test_every_role_and_attribute_token_the_table_names_exists() -> None:
    for op, known in RULES.items():
        assert set(known.roles.values()) <= set(ROLES), op
        for name, values in known.attrs.items():
            for value in values:
                token = not isinstance(value, str) or value in NAMED
                assert token or (name in DTYPE_ATTRS and value in USABLE_DTYPES), (op, name, value)
        assert known.rank[0] <= known.rank[1]
    assert rule("Relu") is DEFAULT_RULE


def test_the_table_names_only_operators_tvms_importer_converts() -> None:
    converted = set(importer_operators())
    assert len(converted) > 100
    assert set(RULES) <= converted
