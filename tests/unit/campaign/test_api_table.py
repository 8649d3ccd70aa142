"""How much of TVM's API a level exercised, read off campaign.db: N of the recorded M, each operation's test
cases, acceptances, refusals and failures filed at it, the generators used; a value that is no API record is
left out, and a campaign from before the record shows no table."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from seedzer.campaign.api_table import api_tables, api_uses
from seedzer.store.api_rows import LevelApi
from seedzer.store.db import CampaignDB, FindingRow
from seedzer.store.reader import CampaignReader

API = LevelApi("sched", "schedule primitives", ("Bind", "CacheInplace", "Split", "Tensorize"),
               ("ms.rule.AutoInline", "ms.MutateTileSize"), "MetaSchedule rules and mutators")


def campaign(tmp_path: Path, api: LevelApi | None = API) -> Path:
    db = CampaignDB(tmp_path / "campaign.db")
    if api is not None:
        db.set_level_api(api)
    db.add_pass_triggers([("sched", "Split", 10, 9), ("sched", "CacheInplace", 4, 0),
                          ("sched", "postproc.RewriteLayout", 3, 3), ("tir", "Simplify", 5, 2)])
    db.add_filter_counts({("sched", "refused", "Split"): 1, ("sched", "refused", "CacheInplace"): 4,
                          ("sched", "not built", "Split"): 2})
    db.add_mutator_counts({("ms.rule.AutoInline", "ok"): 6, ("ms.rule.AutoInline", "invalid"): 1,
                           ("trace.insert", "ok"): 3})
    db.upsert_finding(FindingRow("s1", "exception", "schedule", "Split", "InternalError: x", 1.0, 1.0, 1, "new",
                                 "findings/s1", "sched"))
    db.close()
    return tmp_path / "campaign.db"


def test_n_of_m_and_each_primitives_figures(tmp_path: Path) -> None:
    with CampaignReader.open(campaign(tmp_path)) as reader:
        (report,) = api_uses(reader)
    assert report.headline() == "schedule primitives exercised 2 of 4 (accepted at least once: 1)"
    uses = {u.operation: u for u in report.uses}
    split = uses["Split"]
    assert (split.called, split.accepted, split.refused, split.failures) == (10, 9, 1, 1)
    assert uses["CacheInplace"].refusal_rate == 1.0 and uses["Bind"].refusal_rate is None
    assert not uses["postproc.RewriteLayout"].in_api and "Simplify" not in uses  # another level's pass
    assert report.generators_used == (("ms.rule.AutoInline", 7), ("ms.MutateTileSize", 0))


def test_the_table_names_the_gaps(tmp_path: Path) -> None:
    with CampaignReader.open(campaign(tmp_path)) as reader:
        (group,) = api_tables(reader)
    console = Console(width=200, record=True)
    console.print(group)
    text = console.export_text()
    assert "sched: schedule primitives exercised 2 of 4" in text
    assert "Bind, Tensorize" in text and "CacheInplace" in text and "1 of 2: ms.rule.AutoInline 7" in text
    assert "postproc.RewriteLayout (not counted in M)" in text


def test_no_record_no_table_and_a_foreign_value_is_left_out(tmp_path: Path) -> None:
    path = campaign(tmp_path, api=None)
    db = CampaignDB(path)
    db.set_meta("api.graph", {"operations": "not a list"})
    db.close()
    with CampaignReader.open(path) as reader:
        assert reader.level_apis() == [] and api_tables(reader) == []
