"""Filing without re-gating what is known, and the gate's budget (:mod:`seedzer.campaign.filing`,
:mod:`seedzer.finding.known`), on a real finding store and campaign.db with fake gate jobs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from seedzer.campaign.filing import Filing, FilingSettings
from seedzer.campaign.monitor import QuietMonitor
from seedzer.campaign.stats import CampaignStats
from seedzer.execute.background import Background, JobResult
from seedzer.execute.fake_worker import fake_case
from seedzer.execute.records import TestCaseInfo
from seedzer.finding.gate import GateSettings
from seedzer.finding.known import GUESS, KNOWN_DISMISSAL, KNOWN_ROOT, PREDICTED, KnownVerdicts, culprit_guess
from seedzer.finding.meta import BUG, NOT_A_BUG, PENDING, FindingMeta, FindingSettings
from seedzer.finding.store import FindingStore
from seedzer.finding.tir.gate import GateJob
from seedzer.finding.verdict import Verdict
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.messages import ir_names
from seedzer.oracles.signature import root_key
from seedzer.seed import PassSpec, passes_to_json
from seedzer.store.corpus import Corpus
from seedzer.store.db import CampaignDB
from tests.unit.fake_gate import FakeGate

SCRIPT = "a\nERROR"
CHECK = "InternalError: Check failed: (lanes == 1) is false"


def culprit_bug(*culprit: str) -> Callable[[GateJob], Verdict]:
    """The gate's answer when bisection names ``culprit``: a bug under the root the gate computes."""

    def decide(job: GateJob) -> Verdict:
        got = job.case.expected
        assert got is not None
        root = root_key("lowlevel", got, list(culprit), ir_names(job.case.script)).digest()
        return Verdict(job.signature, BUG, "bug", job.case, got, list(culprit), root, tests=7, rule="culprit")

    return decide


def dismiss(*reasons: str) -> Callable[[GateJob], Verdict]:
    """The gate dismissing its successive jobs for ``reasons`` in turn."""
    left = iter(reasons)

    def decide(job: GateJob) -> Verdict:
        assert job.case.expected is not None
        reason = next(left)
        return Verdict(job.signature, NOT_A_BUG, reason, job.case, job.case.expected, tests=2,
                       rule=reason.split(":")[0])

    return decide


@pytest.fixture
def db(tmp_path: Path) -> Iterator[CampaignDB]:
    d = CampaignDB(tmp_path / "campaign.db")
    yield d
    d.close()


def make_filing(tmp_path: Path, db: CampaignDB, gate: FakeGate, share: float | None = 0.05,
                stats: CampaignStats | None = None) -> Filing:
    settings = FilingSettings(FindingSettings(), GateSettings(), 2.0, 3, False, share)
    return Filing(FindingStore(tmp_path / "findings", db), Corpus(tmp_path / "corpus", db), settings,
                  stats or CampaignStats(), QuietMonitor(), gate)


def error(pass_name: str, message: str = CHECK, symptom: Symptom = Symptom.EXCEPTION) -> Observation:
    return Observation(symptom, Stage.PASS, pass_name, message)


def file(filing: Filing, obs: Observation, tc_id: int, passes: tuple[str, ...] = ("tirx.Simplify",)) -> str:
    """File one observation of a fuzzer test case; its raw signature."""
    pj = passes_to_json([PassSpec(p) for p in passes])
    tc = TestCaseInfo(tc_id, "fuzz", None, "tir", script=SCRIPT, passes=pj, announced=True,
                      case=fake_case("tir", SCRIPT, pj))
    before = set(filing.verdicts)
    filing.file(filing.candidate(obs, tc, 0, []))
    (sig,) = set(filing.verdicts) - before
    return sig


def row_of(db: CampaignDB, sig: str) -> Any:
    return next(r for r in db.findings() if r.signature == sig)


# --- known roots ------------------------------------------------------------------------------------
def test_a_new_candidate_of_a_known_root_and_culprit_is_counted_without_a_gate_run(tmp_path: Path,
                                                                                   db: CampaignDB) -> None:
    gate = FakeGate(culprit_bug("tirx.VectorizeLoop"))
    filing = make_filing(tmp_path, db, gate)
    first = file(filing, error("tirx.VectorizeLoop"), 1)
    filing.poll()
    root = row_of(db, first).root
    assert gate.submitted == [first] and row_of(db, first).verdict == BUG

    # the same check failing at the same step of another program: another raw signature, same root
    second = file(filing, error("<reference>:tirx.VectorizeLoop"), 2)
    filing.poll()
    assert second != first
    assert gate.submitted == [first]  # never gated again
    row = row_of(db, second)
    assert (row.verdict, row.root) == (BUG, root) and row.verdict_reason.startswith("bug: counted against the known")
    meta = FindingMeta.load(tmp_path / "findings" / second)
    assert meta.extra["gate_rule"] == KNOWN_ROOT and meta.culprit == ["tirx.VectorizeLoop"]
    assert meta.extra["gate_tests"] == 0 and "fuzzer_observation" not in meta.extra
    assert (tmp_path / "findings" / second / "repro.py").is_file()  # the candidate's own folder stays
    stats = filing.stats
    assert stats.unique == {"exception": 1} and stats.findings == {"exception": 2}
    assert stats.pending == 0 and stats.gate_known == 1
    assert "1 counted against known verdicts" in stats.gate_share()


def test_a_bug_counted_without_a_gate_run_gets_its_model_written_when_the_gate_is_idle(
        tmp_path: Path, db: CampaignDB, monkeypatch: pytest.MonkeyPatch) -> None:
    """A known-root bug's folder has no failing model (no gate run wrote it): a model job writes it when the gate
    is idle and its record goes into meta.json; the gated finding (whose gate wrote it) is not queued."""
    from seedzer.campaign import model_fills
    from seedzer.finding.kind import GateCall
    from seedzer.finding.meta import ModelRecord

    record = ModelRecord("model.onnx", "seed.onnx", "model_000001.onnx")
    written: list[str] = []

    class Writer:
        def model_call(self, folder: Path, meta: FindingMeta) -> GateCall:
            return GateCall(lambda where: written.append(where) or record, (str(folder),))

    monkeypatch.setattr(model_fills, "kind", lambda name: Writer())
    gate = FakeGate(culprit_bug("tirx.VectorizeLoop"))
    filing = make_filing(tmp_path, db, gate)
    first = file(filing, error("tirx.VectorizeLoop"), 1)
    filing.poll()
    second = file(filing, error("<reference>:tirx.VectorizeLoop"), 2)
    filing.poll()
    filing.poll()
    assert gate.submitted == [first, f"{model_fills.MODEL_KEY}{second}"]
    assert written == [str(tmp_path / "findings" / second)]
    assert FindingMeta.load(tmp_path / "findings" / second).failing_model == record


def test_a_known_root_whose_culprit_is_not_the_guess_is_gated(tmp_path: Path, db: CampaignDB) -> None:
    """Ill-formed IR is keyed on the pass that emitted it, whatever else bisection named: the
    prediction hits the root, but the gate's culprit (two passes) is not the guess (one)."""
    gate = FakeGate(culprit_bug("tirx.Simplify", "tirx.VectorizeLoop"))
    filing = make_filing(tmp_path, db, gate)
    first = file(filing, error("tirx.VectorizeLoop", "the IR is ill-formed", Symptom.ILLFORMED), 1)
    filing.poll()
    meta = FindingMeta.load(tmp_path / "findings" / first)
    assert meta.extra[PREDICTED] == meta.root_signature  # the prediction did hit the root
    second = file(filing, error("<reference>:tirx.VectorizeLoop", "the IR is ill-formed", Symptom.ILLFORMED), 2)
    filing.poll()
    assert gate.submitted == [first, second] and filing.stats.gate_known == 0


def test_another_check_or_pass_is_gated(tmp_path: Path, db: CampaignDB) -> None:
    gate = FakeGate(lambda job: culprit_bug(job.case.expected.pass_name or "")(job))  # type: ignore[union-attr]
    filing = make_filing(tmp_path, db, gate)
    sigs = [file(filing, error("tirx.VectorizeLoop"), 1), file(filing, error("tirx.VectorizeLoop", "other"), 2),
            file(filing, error("tirx.Simplify"), 3)]
    for _ in sigs:
        filing.poll()
    assert gate.submitted == sigs and filing.stats.unique == {"exception": 3}


def test_candidates_waiting_behind_a_gate_run_are_counted_once_it_judges_their_root(tmp_path: Path,
                                                                                    db: CampaignDB) -> None:
    gate = FakeGate(culprit_bug("tirx.VectorizeLoop"), hold=True)
    filing = make_filing(tmp_path, db, gate)
    first = file(filing, error("tirx.VectorizeLoop"), 1)
    others = [file(filing, error(f"<{p}>:tirx.VectorizeLoop"), i) for i, p in enumerate(("reference", "minimal"), 2)]
    filing.poll()
    assert gate.submitted == [first]  # one run at a time: the others wait
    assert filing.stats.pending == 3 and filing.stats.gate_waiting == 2
    assert all(row_of(db, s).verdict == PENDING for s in others)
    gate.hold = False
    filing.poll()
    assert gate.submitted == [first]
    assert {row_of(db, s).verdict for s in [first, *others]} == {BUG}
    assert filing.stats.pending == 0 and filing.stats.gate_waiting == 0 and filing.stats.gate_known == 2


def test_a_resumed_campaign_counts_candidates_of_roots_judged_before(tmp_path: Path, db: CampaignDB) -> None:
    # 1: killed before any verdict: one candidate with its gate run, one waiting behind it
    held = FakeGate(culprit_bug("tirx.VectorizeLoop"), hold=True)
    killed = make_filing(tmp_path, db, held)
    first = file(killed, error("tirx.VectorizeLoop"), 1)
    waiting = file(killed, error("<reference>:tirx.VectorizeLoop"), 2)
    assert held.submitted == [first]

    # 2: --resume gates the first again; the one that waited is counted by its verdict
    gate = FakeGate(culprit_bug("tirx.VectorizeLoop"))
    resumed = make_filing(tmp_path, db, gate)
    resumed.restore()
    resumed.poll()
    assert gate.submitted == [first]
    assert row_of(db, waiting).verdict == BUG and resumed.stats.gate_known == 1

    # 3: another resume learns the root from campaign.db: a new candidate of it is never gated
    again = FakeGate(culprit_bug("tirx.VectorizeLoop"))
    third = make_filing(tmp_path, db, again)
    third.restore()
    later = file(third, error("<minimal>:tirx.VectorizeLoop"), 3)
    third.poll()
    assert again.submitted == [] and row_of(db, later).verdict == BUG
    assert third.stats.unique == {"exception": 1} and third.stats.gate_known == 1


# --- known dismissals --------------------------------------------------------------------------------
PROGRAMS = ("opt", "reference", "minimal", "fuzzed")


def test_a_key_dismissed_twice_for_one_reason_is_counted_as_dismissed(tmp_path: Path, db: CampaignDB) -> None:
    gate = FakeGate(dismiss("contract: fails only on IR its position never has", "contract: again"))
    filing = make_filing(tmp_path, db, gate)
    sigs = []
    for i, program in enumerate(PROGRAMS):
        sigs.append(file(filing, error(f"<{program}>:tirx.VectorizeLoop"), i))
        filing.poll()
    assert gate.submitted == sigs[:2]
    for sig in sigs[2:]:
        row = row_of(db, sig)
        assert row.verdict == NOT_A_BUG and row.verdict_reason.startswith("contract: counted as dismissed")
        assert FindingMeta.load(tmp_path / "findings" / sig).extra["gate_rule"] == KNOWN_DISMISSAL
    assert filing.stats.not_a_bug == {"contract": 4} and filing.stats.gate_known == 2


def test_dismissals_for_different_reasons_are_gated(tmp_path: Path, db: CampaignDB) -> None:
    gate = FakeGate(dismiss("contract: one", "invalid: two", "precondition: three"))
    filing = make_filing(tmp_path, db, gate)
    sigs = []
    for i, program in enumerate(PROGRAMS[:3]):
        sigs.append(file(filing, error(f"<{program}>:tirx.VectorizeLoop"), i))
        filing.poll()
    assert gate.submitted == sigs and filing.stats.gate_known == 0


def meta_of(verdict: str, predicted: str, reason: str = "", rule: str = "culprit", root: str | None = None,
            culprit: tuple[str, ...] = ()) -> FindingMeta:
    obs = error("tirx.VectorizeLoop")
    meta = FindingMeta("0123456789ab", "lowlevel", obs, verdict=verdict, verdict_reason=reason,
                       root_signature=root, culprit=list(culprit),
                       extra={PREDICTED: predicted, GUESS: ["tirx.VectorizeLoop"], "gate_rule": rule})
    return meta


def test_known_verdicts_learn_only_from_gate_runs_and_never_dismiss_a_key_judged_a_bug() -> None:
    known = KnownVerdicts()
    pending = meta_of(PENDING, "k" * 12)
    for _ in range(3):  # counted verdicts are no evidence
        known.learn(meta_of(NOT_A_BUG, "k" * 12, "contract: x", rule=KNOWN_DISMISSAL))
    known.learn(meta_of(BUG, "r" * 12, "bug", rule=KNOWN_ROOT, root="r" * 12, culprit=("tirx.VectorizeLoop",)))
    assert known.verdict(pending) is None and known.verdict(meta_of(PENDING, "r" * 12)) is None
    known.learn(meta_of(NOT_A_BUG, "k" * 12, "contract: x"))
    known.learn(meta_of(BUG, "k" * 12, "bug", root="z" * 12, culprit=("tirx.Simplify",)))  # mixed evidence
    known.learn(meta_of(NOT_A_BUG, "k" * 12, "contract: y"))
    assert known.verdict(pending) is None
    other = meta_of(PENDING, "j" * 12)
    known.learn(meta_of(NOT_A_BUG, "j" * 12, "contract: x"))
    assert known.verdict(other) is None  # once is not enough
    known.learn(meta_of(NOT_A_BUG, "j" * 12, "contract: y"))
    verdict = known.verdict(other)
    assert verdict is not None and verdict.verdict == NOT_A_BUG and verdict.reason.startswith("contract:")


def test_the_culprit_guess() -> None:
    mismatch = Observation(Symptom.MISMATCH, Stage.COMPARE, None, "differ", comparison="opt-vs-reference")
    assert culprit_guess(mismatch, ["tirx.A", "tirx.A"]) == ["tirx.A"]
    assert culprit_guess(mismatch, ["tirx.A", "tirx.B"]) is None  # no single guess: gated
    assert culprit_guess(error("<reference>:tirx.VectorizeLoop"), ["tirx.A"]) == ["tirx.VectorizeLoop"]
    assert culprit_guess(error(""), []) is None


# --- the gate's budget --------------------------------------------------------------------------------
def test_no_new_gate_run_while_the_gate_is_over_its_share(tmp_path: Path, db: CampaignDB) -> None:
    stats = CampaignStats(elapsed=100.0, jobs=2)  # 200 s of worker time
    gate = FakeGate(lambda job: culprit_bug(job.case.expected.pass_name or "")(job), cpu=20.0)  # type: ignore[union-attr]
    filing = make_filing(tmp_path, db, gate, 0.05, stats)
    first = file(filing, error("tirx.A"), 1)
    filing.poll()  # 20 s of 200 s: 10%
    second = file(filing, error("tirx.B"), 2)
    filing.poll()
    assert gate.submitted == [first] and row_of(db, second).verdict == PENDING
    assert stats.pending == 1 and stats.gate_waiting == 1 and "1 waiting" in stats.gate_share()
    stats.elapsed = 199.0  # 20 s of 398 s: still over 5%
    filing.poll()
    assert gate.submitted == [first]
    stats.elapsed = 200.0  # 20 s of 400 s: 5%
    filing.poll()
    assert gate.submitted == [first, second]
    filing.poll()
    assert row_of(db, second).verdict == BUG and stats.pending == 0 and stats.gate_waiting == 0


def test_without_a_share_limit_every_candidate_is_gated_in_turn(tmp_path: Path, db: CampaignDB) -> None:
    stats = CampaignStats(elapsed=1.0, jobs=1)
    gate = FakeGate(lambda job: culprit_bug(job.case.expected.pass_name or "")(job), cpu=20.0)  # type: ignore[union-attr]
    filing = make_filing(tmp_path, db, gate, None, stats)
    sigs = []
    for i, name in enumerate(("tirx.A", "tirx.B", "tirx.C")):
        sigs.append(file(filing, error(name), i))
        filing.poll()
    assert gate.submitted == sigs


def test_the_end_drain_judges_what_waited_and_a_resume_what_it_left(tmp_path: Path, db: CampaignDB) -> None:
    stats = CampaignStats(elapsed=10.0, jobs=1)
    gate = FakeGate(lambda job: culprit_bug(job.case.expected.pass_name or "")(job), cpu=5.0)  # type: ignore[union-attr]
    filing = make_filing(tmp_path, db, gate, 0.05, stats)
    sigs = [file(filing, error(name), i) for i, name in enumerate(("tirx.A", "tirx.B", "tirx.C", "tirx.D"))]
    filing.poll()
    assert gate.submitted == sigs[:1] and stats.gate_waiting == 3
    filing.drain(0.0)  # no time at all: everything waiting stays pending
    assert gate.submitted == sigs[:1] and {row_of(db, s).verdict for s in sigs[1:]} == {PENDING}
    filing.drain(30.0)  # over the share, the end drain judges regardless
    assert gate.submitted == sigs and {row_of(db, s).verdict for s in sigs} == {BUG}
    assert stats.pending == 0 and stats.unique == {"exception": 4}

    # a candidate left pending by a campaign that ended is judged on --resume
    meta = filing.findings.load(sigs[3])
    meta.verdict, meta.verdict_reason, meta.root_signature = PENDING, "", None
    filing.findings.update(meta)  # its folder and its row, as a campaign that ended before its verdict left them
    again = FakeGate(culprit_bug("tirx.D"))
    resumed = make_filing(tmp_path, db, again, 0.05, CampaignStats())
    resumed.restore()
    resumed.poll()
    assert again.submitted == [sigs[3]] and row_of(db, sigs[3]).verdict == BUG


def test_a_gate_job_over_its_limit_is_killed_and_charged_its_wall_seconds() -> None:
    jobs = Background("gate-test", None, timeout=0.5)
    jobs.submit("slow", time.sleep, 30.0)
    out: list[JobResult] = []
    end = time.monotonic() + 60
    while not out and time.monotonic() < end:
        out = jobs.poll()
        time.sleep(0.05)
    jobs.close()
    (job,) = out
    assert job.error is not None and "ran over" in job.error and job.cpu_seconds >= 0.5
    assert jobs.pending() == 0


# --- graph-level candidates --------------------------------------------------------------------------
class RecordingGate(FakeGate):
    """Gate jobs that only record which call each candidate was sent to (never answers)."""

    def __init__(self) -> None:
        super().__init__(lambda job: None, hold=True)  # type: ignore[arg-type, return-value]
        self.calls: list[tuple[str, Callable[..., Any]]] = []

    def submit(self, key: str, fn: Callable[..., Any], *args: Any) -> None:
        self.calls.append((key, fn))


def test_a_graph_candidate_is_filed_with_its_model_and_steps_and_sent_to_the_graph_gate(tmp_path: Path,
                                                                                         db: CampaignDB) -> None:
    from seedzer.finding.graph.gate import run_graph_gate_on_folder
    from seedzer.kernel.graph.case import GraphCase, GraphPass
    from seedzer.levels.graph.entry import GraphSeed

    model = tmp_path / "pool" / "model_000001.onnx"
    model.parent.mkdir()
    model.write_bytes(b"onnx bytes")
    seed = GraphSeed(str(model), (("x", "float32", (2, 3)),))
    steps = (GraphPass("relax.Normalize"), GraphPass("relax.ConvertLayout", {"desired_layouts": {}}))
    case = GraphCase(seed.specs, steps, model_file=str(model))
    pj = passes_to_json([PassSpec(p.name, tuple(sorted(p.args.items()))) for p in steps])
    tc = TestCaseInfo(3, "fuzz", None, "graph", script=seed.to_text(), passes=pj, announced=True, case=case)
    gate = RecordingGate()
    filing = make_filing(tmp_path, db, gate)
    obs = error("relax.ConvertLayout", "InternalError: Check failed: (res != npos) is false: layoutAB")
    filing.file(filing.candidate(obs, tc, 1, []))
    (sig,) = filing.verdicts
    folder = tmp_path / "findings" / sig
    meta = FindingMeta.load(folder)
    assert meta.kind == "graph" and meta.verdict == PENDING and meta.testcase == 3
    assert (folder / "seed.onnx").read_bytes() == b"onnx bytes"  # the pool's file, copied
    assert (folder / "model.onnx").read_bytes() == b"onnx bytes"  # no model mutation: the model that fails
    filed = GraphCase.from_json(json.loads((folder / "case.json").read_text()))
    assert filed.passes == steps and filed.model_file == "seed.onnx" and filed.expected == obs
    assert gate.calls == [(sig, run_graph_gate_on_folder)]
    filing.file(filing.candidate(obs, tc, 1, []))  # the same failure again: counted, never filed or gated twice
    assert row_of(db, sig).count == 2 and len(gate.calls) == 1


# --- the ledger's known roots -----------------------------------------------------------------------
def test_a_bug_under_a_root_the_ledger_marks_reported_is_counted_as_known_not_new(tmp_path: Path,
                                                                                  db: CampaignDB) -> None:
    expected = error("tirx.VectorizeLoop")
    root = root_key("lowlevel", expected, ["tirx.VectorizeLoop"], ir_names(SCRIPT)).digest()
    note = "ledger: reported https://github.com/apache/tvm/issues/1"
    settings = FilingSettings(FindingSettings(), GateSettings(), 2.0, 3, False, 0.05)
    filing = Filing(FindingStore(tmp_path / "findings", db, known_roots={root: note}),
                    Corpus(tmp_path / "corpus", db), settings, CampaignStats(), QuietMonitor(),
                    FakeGate(culprit_bug("tirx.VectorizeLoop")))
    sig = file(filing, expected, 1)
    filing.poll()
    meta = FindingMeta.load(tmp_path / "findings" / sig)
    assert (meta.verdict, meta.root_signature, meta.status, meta.known_issue) == (BUG, root, "known", note)
    assert row_of(db, sig).status == "known"
    assert filing.stats.unique == {"exception": 1}  # counted, not reported as new
    other = file(filing, error("tirx.StorageRewrite", "InternalError: Check failed: another"), 2)
    filing.poll()
    assert FindingMeta.load(tmp_path / "findings" / other).status == "new"


def test_a_bug_whose_root_matches_a_known_upstream_issue_is_filed_known_with_its_number(tmp_path: Path,
                                                                                        db: CampaignDB) -> None:
    from seedzer.ledger.upstream import Fingerprint, UpstreamIssue

    table = [UpstreamIssue("apache/tvm", 424242, "VectorizeLoop lanes", "open",
                           Fingerprint(code=r"tirx\.VectorizeLoop", message="lanes == 1"))]
    settings = FilingSettings(FindingSettings(), GateSettings(), 2.0, 3, False, 0.05)
    filing = Filing(FindingStore(tmp_path / "findings", db, upstream=table), Corpus(tmp_path / "corpus", db),
                    settings, CampaignStats(), QuietMonitor(), FakeGate(culprit_bug("tirx.VectorizeLoop")))
    sig = file(filing, error("tirx.VectorizeLoop"), 1)
    other = file(filing, error("tirx.StorageRewrite", "InternalError: Check failed: another"), 2)
    filing.poll()
    meta = FindingMeta.load(tmp_path / "findings" / sig)
    assert (meta.status, meta.known_issue) == ("known", "known upstream apache/tvm#424242 (open)")
    assert FindingMeta.load(tmp_path / "findings" / other).status == "new"
