"""A JSON object read back from a campaign.db text column."""

from __future__ import annotations

from seedzer.campaign.json_column import json_object


def test_an_object_is_read_and_anything_else_is_empty() -> None:
    assert json_object('{"gate": 1.5}') == {"gate": 1.5}
    assert json_object(None) == json_object("") == json_object("not json") == json_object("[1, 2]") == {}
