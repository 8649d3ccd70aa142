"""Every command and the live monitor show text from outside (model names, TVM messages, meta.json
fields, pool file names, ledger links and notes, campaign.db rows) as it is: markup that rich would
raise on (``[/]``) or obey (``[bold]``, ``[link=...]``) and terminal escape sequences (set the title,
clear the screen) end as visible text, one line per row, exit status 0."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from seedzer.campaign.filing import Filing, FilingSettings
from seedzer.campaign.monitor import Monitor, PlainMonitor, RichMonitor
from seedzer.campaign.stats import CampaignStats
from seedzer.cli import main
from seedzer.console import SafeConsole, visible
from seedzer.finding.gate import GateSettings
from seedzer.finding.meta import BUG, NOT_A_BUG, FindingMeta, FindingSettings
from seedzer.finding.store import FindingStore
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import ir_names
from seedzer.oracles.signature import root_key
from seedzer.store.corpus import Corpus
from seedzer.store.db import CampaignDB, FindingRow
from tests.unit.campaign.test_filing import SCRIPT, culprit_bug, file
from tests.unit.fake_gate import FakeGate

HOSTILE = "[/] [bold]b[link=file:///etc/passwd]l \x1b]0;pwned\x07\x1b[2J\nrow"
"""Markup rich raises on or obeys, a set-title and a clear-screen sequence, and a line break."""
SHOWN = visible(HOSTILE)
HEADLINE = visible(HOSTILE.splitlines()[0])
"""What a one-line headline of a message holding :data:`HOSTILE` shows of it."""
WIDE = {"COLUMNS": "3000"}
"""A console wide enough that no column folds: a row of more than one line is the text's doing."""
ROOT, OTHER_ROOT = "aaaa00000001", "bbbb00000002"


def _meta(sig: str, root: str | None, verdict: str, message: str) -> FindingMeta:
    obs = Observation(Symptom.EXCEPTION, Stage.PASS, f"tirx.{HOSTILE}", message)
    return FindingMeta(sig, "tir", obs, verdict=verdict, verdict_reason="bug" if verdict == BUG else HOSTILE,
                       root_signature=root, culprit=[f"tirx.{HOSTILE}"] if root else [])


def hostile_campaign(out: Path, ledger: Path, sigs: tuple[str, str, str]) -> Path:
    """A campaign whose every text holds :data:`HOSTILE`: a bug (meta.json's message, pass and culprit), a
    not-a-bug (its reason), a candidate without a readable meta.json (campaign.db's row), a pool model
    that gave no seed (its file name and reasons), and test cases turned away (reason, pass, sample,
    re-run)."""
    out.mkdir(parents=True)
    db = CampaignDB(out / "campaign.db")
    db.set_meta("pool", str(out.parent / "pool"))
    db.set_meta("ledger", str(ledger))
    bug, dismissed, unread = sigs
    for sig, root, verdict in ((bug, ROOT, BUG), (dismissed, None, NOT_A_BUG)):
        folder = out / "findings" / sig
        folder.mkdir(parents=True)
        meta = _meta(sig, root, verdict, f"Check failed: {HOSTILE}")
        (folder / "meta.json").write_text(meta.dump(folder / "meta.json"))
        db.upsert_finding(FindingRow(sig, "exception", "pass", HOSTILE, HOSTILE, 1.0, 2.0, 1, "new",
                                     f"findings/{sig}", "tir", verdict, meta.verdict_reason, root))
    (out / "findings" / unread).mkdir()
    db.upsert_finding(FindingRow(unread, "exception", HOSTILE, HOSTILE, HOSTILE, 3.0, 4.0, 1, HOSTILE,
                                 f"findings/{unread}", "tir"))
    db.set_model(f"[bold red]m[/].onnx{HOSTILE}", "failed", 0,
                 {"observations": [{"symptom": HOSTILE, "pass": HOSTILE, "message": HOSTILE}]})
    db.add_filter_counts({("tir", HOSTILE, HOSTILE): 3})
    sample = db.add_filter_sample("tir", HOSTILE, HOSTILE, HOSTILE, 1)
    db.set_filter_rerun(sample, HOSTILE, HOSTILE)
    db.close()
    return out


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two hostile campaigns that found one root, in a ledger that says it was reported at a hostile link
    (marked once, as the issue's ``https://x/[/]`` was); the first campaign's directory name is hostile too."""
    ledger = tmp_path / "ledger.db"
    one = hostile_campaign(tmp_path / "c[/]\x1b]0;dir\x07", ledger, ("111111111111", "121212121212", "131313131313"))
    two = hostile_campaign(tmp_path / "two", ledger, ("222222222222", "232323232323", "242424242424"))
    for campaign in (one, two):
        ok(invoke("bugs", "--ledger", str(ledger), "add", str(campaign)))
    ok(invoke("bugs", "--ledger", str(ledger), "mark", ROOT, "reported", "--link", HOSTILE))
    return one, two, ledger


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=WIDE)


def ok(result: Result) -> str:
    """The whole output of a command that must have ended well, checked for raw control characters."""
    assert result.exit_code == 0, (result.output, result.exception)
    text = result.stdout + result.stderr
    assert "\x1b" not in text and "\x07" not in text, text
    return text


def rows_holding_the_text(text: str) -> list[str]:
    """The lines that show part of :data:`HOSTILE`, each checked to show all of it (one line per row)."""
    lines = [line for line in text.splitlines() if "pwned" in line]
    for line in lines:
        assert SHOWN in line, line
    return lines


def test_status_all_and_invalid_show_every_hostile_field_on_one_line(world: tuple[Path, Path, Path]) -> None:
    one, _, _ = world
    shown = ok(invoke("status", str(one), "--all"))
    assert visible(one.name) in shown  # the campaign's name in the summary's title
    assert "reported " + SHOWN in shown  # the ledger's link, from the other campaign
    # the bug (culprit, ledger, message), the model that gave no seed, the test cases turned away and
    # their re-run, and with --all every candidate: the bug, the one without meta.json, the not-a-bug
    assert len(rows_holding_the_text(shown)) == 7
    assert "[bold red]m[/].onnx" + SHOWN in shown
    invalid = ok(invoke("status", str(one), "--invalid"))
    assert len(rows_holding_the_text(invalid)) == 4


def test_bugs_lists_and_marks_roots_with_a_hostile_link_and_note(world: tuple[Path, Path, Path]) -> None:
    one, two, ledger = world
    marked = ok(invoke("bugs", "--ledger", str(ledger), "mark", ROOT[:4], "reported", "--link", HOSTILE,
                       "--note", HOSTILE))
    assert marked.splitlines() == [f"{ROOT}: reported {SHOWN} ({ledger})"]
    listed = ok(invoke("bugs", "--ledger", str(ledger)))
    assert len(rows_holding_the_text(listed)) == 1
    both = ok(invoke("bugs", "--ledger", str(ledger), "--campaign", str(one), "--campaign", str(two)))
    assert visible(one.name) in both
    ok(invoke("status", str(two)))  # a link marked once never breaks a campaign's status


def test_replay_shows_a_reproducers_hostile_output_and_reason_on_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "findings" / "313131313131"
    folder.mkdir(parents=True)
    meta = _meta(folder.name, None, NOT_A_BUG, HOSTILE)
    meta.extra["filter_reason"] = HOSTILE
    (folder / "meta.json").write_text(meta.dump(folder / "meta.json"))
    (folder / "repro.py").write_text(f"import sys\nprint('observed ' + {HOSTILE!r})\nsys.exit(2)\n")
    shown = ok(invoke("replay", str(folder), "--python", sys.executable))
    (row,) = rows_holding_the_text(shown)
    assert f"filtered before the gate ({SHOWN}): a different failure" in row


def _known_bug_line(tmp_path: Path, monitor: Monitor) -> None:
    """File a bug under a root the ledger marks reported at a hostile link, with a hostile message."""
    expected = Observation(Symptom.EXCEPTION, Stage.PASS, "tirx.VectorizeLoop", f"Check failed: {HOSTILE}")
    root = root_key("lowlevel", expected, ["tirx.VectorizeLoop"], ir_names(SCRIPT)).digest()
    db = CampaignDB(tmp_path / "campaign.db")
    settings = FilingSettings(FindingSettings(), GateSettings(), 2.0, 3, False, 0.05)
    filing = Filing(FindingStore(tmp_path / "findings", db, known_roots={root: f"ledger: reported {HOSTILE}"}),
                    Corpus(tmp_path / "corpus", db), settings, CampaignStats(), monitor,
                    FakeGate(culprit_bug("tirx.VectorizeLoop")))
    file(filing, expected, 1)
    filing.poll()
    filing.monitor.message(HOSTILE)
    filing.monitor.update(CampaignStats(phase=HOSTILE))
    monitor.close()
    db.close()


def test_the_plain_monitor_shows_the_known_bug_line_and_any_message_on_one_line(tmp_path: Path) -> None:
    stream = io.StringIO()
    _known_bug_line(tmp_path, PlainMonitor(period=0.0, stream=stream))
    text = stream.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    lines = text.splitlines()
    known = [line for line in lines if line.startswith("known bug")]
    assert len(known) == 1 and f"[ledger: reported {SHOWN}]" in known[0] and f"Check failed: {HEADLINE}" in known[0]
    assert SHOWN in lines and any(line.startswith(f"[{SHOWN}]") for line in lines)


def test_the_live_monitor_shows_the_known_bug_line_and_obeys_no_sequence_in_it(tmp_path: Path) -> None:
    out = io.StringIO()
    _known_bug_line(tmp_path, RichMonitor(SafeConsole(file=out, force_terminal=True, width=3000)))
    text = out.getvalue()  # rich's own cursor and style sequences, but none from the text
    assert "\x1b]0;pwned" not in text and "\x1b[2J" not in text and "\x07" not in text
    assert f"[ledger: reported {SHOWN}]" in text and f"Check failed: {HEADLINE}" in text
    assert json.dumps(text).count("pwned") >= 3
