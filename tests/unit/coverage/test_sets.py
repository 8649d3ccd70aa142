"""Coverage sets: export, diff and union over campaign.db files and experiment trial directories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from seedzer.cli import main
from seedzer.coverage.sets import (
    CoverageSet,
    CoverageSetError,
    compare,
    read_file,
    read_source,
    render,
    union,
)
from seedzer.coverage.tracker import family_of
from seedzer.store.db import CampaignDB


def campaign(directory: Path, features: list[str]) -> Path:
    """A campaign directory whose campaign.db holds ``features`` (written like the campaign does)."""
    directory.mkdir(parents=True)
    db = CampaignDB(directory / "campaign.db")
    db.add_features(features, 1.0)
    db.close()
    return directory


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    """An experiment's results: two pools (heuristics), two trials each."""
    root = tmp_path / "results" / "quick"
    campaign(root / "conv3" / "trial-1", ["sc:tvm_compiler:10", "sc:tvm_compiler:20", "seq/Simplify:=", "bp:tvm:5"])
    campaign(root / "conv3" / "trial-2", ["sc:tvm_compiler:20", "sc:tvm_compiler:30"])
    campaign(root / "basic" / "trial-1", ["sc:tvm_compiler:10", "sc:tvm_runtime:40", "seq/Simplify:="])
    campaign(root / "basic" / "trial-2", ["sc:tvm_compiler:10"])
    return root


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["coverage", *args])
    return res.exit_code, res.output


def test_features_belong_to_backends_by_prefix() -> None:
    assert family_of("sc:tvm_compiler:1a") == "sancov"
    assert family_of("bp:tvm:1a") == "breakpoints"
    assert family_of("seq/Simplify:For:+1") == "passes"
    assert family_of("build/LowerTVMBuiltin:~") == "passes"


def test_sources_campaign_trials_and_glob(experiment: Path) -> None:
    one = read_source(experiment / "conv3" / "trial-1")
    assert one.features == {"sc:tvm_compiler:10", "sc:tvm_compiler:20", "seq/Simplify:=", "bp:tvm:5"}
    assert one.by_backend() == {"breakpoints": 1, "passes": 1, "sancov": 2}
    pool = read_source(experiment / "conv3")  # a directory of trials: their union
    assert len(pool.sources) == 2 and len(pool.features) == 5
    assert read_source(str(experiment / "*" / "trial-1")).features == one.features | {"sc:tvm_runtime:40"}
    assert read_source(str(experiment / "conv3" / "trial-[2]")).sources == [str(experiment / "conv3" / "trial-2")]


def test_reading_does_not_write(experiment: Path) -> None:
    db = experiment / "basic" / "trial-2" / "campaign.db"
    before = db.stat().st_mtime_ns, db.read_bytes()
    read_source(db.parent)
    assert (db.stat().st_mtime_ns, db.read_bytes()) == before


def test_compare_and_set_ops(experiment: Path) -> None:
    a, b = read_source(experiment / "conv3"), read_source(experiment / "basic")
    c = compare(a.only("sancov"), b.only("sancov"))
    assert (c.a, c.b, c.both, c.only_a, c.only_b) == (3, 2, 1, 2, 1)
    assert (a - b).only("sancov").features == {"sc:tvm_compiler:20", "sc:tvm_compiler:30"}
    assert (a | b).features == a.features | b.features
    assert union([experiment / "conv3", experiment / "basic"]).features == (a | b).features


def test_export_text_is_stable_and_round_trips(experiment: Path, tmp_path: Path) -> None:
    out = tmp_path / "conv3.cov"
    code, output = run("export", str(experiment / "conv3"), "-o", str(out))
    assert code == 0, output
    lines = out.read_text().splitlines()
    assert lines[0] == "# seedzer-coverage-set" and "# backend: all" in lines and "# count: 5" in lines
    assert "# backends: breakpoints=1 passes=1 sancov=3" in lines
    body = [ln for ln in lines if not ln.startswith("#")]
    assert body == sorted(body) and len(body) == 5
    assert read_file(out).features == read_source(experiment / "conv3").features
    again = tmp_path / "again.cov"
    run("export", str(experiment / "conv3"), "-o", str(again))
    assert again.read_text() == out.read_text()


def test_export_json_and_backend_filter(experiment: Path, tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    code, output = run("export", str(experiment / "basic"), "-o", str(out), "--backend", "sancov")
    assert code == 0, output
    doc = json.loads(out.read_text())
    assert doc["backend"] == "sancov" and doc["count"] == 2
    assert doc["features"] == ["sc:tvm_compiler:10", "sc:tvm_runtime:40"]
    assert read_source(out).features == set(doc["features"])
    code, output = run("export", str(experiment / "basic" / "trial-2"))
    assert code == 0 and output.splitlines()[-1] == "sc:tvm_compiler:10"


def test_diff_between_heuristics(experiment: Path, tmp_path: Path) -> None:
    only_a = tmp_path / "conv3-only.cov"
    code, output = run("diff", str(experiment / "conv3"), str(experiment / "basic"), "--backend", "sancov",
                       "--only-a", str(only_a))
    assert code == 0, output
    numbers = {ln.split()[0]: int(ln.split()[1]) for ln in output.splitlines() if ln.startswith("|")}
    assert numbers == {"|A|": 3, "|B|": 2, "|A&B|": 1, "|A-B|": 2, "|B-A|": 1}
    assert read_file(only_a).features == {"sc:tvm_compiler:20", "sc:tvm_compiler:30"}
    # an exported file compares like the campaigns it came from
    code, output2 = run("diff", str(only_a), str(experiment / "basic"), "--backend", "sancov")
    assert code == 0 and "|A&B|           0" in output2


def test_union_of_globs_and_files(experiment: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.cov"
    code, output = run("union", str(experiment / "conv3" / "trial-*"), str(experiment / "basic" / "trial-1"),
                       "-o", str(out))
    assert code == 0, output
    assert "all.cov: 6 features from 3 source(s)" in output
    expected = read_source(experiment / "conv3").features | read_source(experiment / "basic" / "trial-1").features
    assert read_file(out).features == expected


@pytest.mark.parametrize(("name", "content", "message"), [
    ("missing", None, "no such file, directory or matching path"),
    ("empty-dir", "", "no campaign directory (no campaign.db) at or below it"),
    ("x.cov", "hello\n", "not a coverage set"),
    ("x.json", '{"a": 1}', "not a coverage set"),
    ("y.json", "{oops", "invalid JSON"),
])
def test_bad_sources_are_one_line_errors(tmp_path: Path, name: str, content: str | None, message: str) -> None:
    path = tmp_path / name
    if content == "":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    with pytest.raises(CoverageSetError, match=re.escape(message)):
        read_source(path)
    code, output = run("export", str(path))
    assert code == 2 and output.count("\n") == 1 and output.startswith(f"error: {path}")


def test_corrupt_database_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "campaign.db").write_bytes(b"not sqlite at all" * 100)
    code, output = run("diff", str(tmp_path / "c"), str(tmp_path / "c"))
    assert code == 2 and output.count("\n") == 1
    db = tmp_path / "c" / "campaign.db"
    assert output == f"error: {db}: not an SQLite database, so not a Seedzer campaign database\n"


def test_render_empty_set() -> None:
    text = render(CoverageSet())
    assert text.splitlines()[-1] == "# count: 0" and "# backends: none" in text
