"""A campaign's workers as Ray actors (:mod:`seedzer.execute.ray_pool`, :mod:`seedzer.execute.ray_actor`).

The first tests need no cluster: the mapping of an actor's events onto the campaign's test cases, the
actor class driven directly (its real local pool forks the cheap fake worker), and the node-side
settings. The others run real campaigns (fake worker, fake seed loader and gate, as in
``test_campaign_fake``) through a private Ray instance bound to 127.0.0.1 with two CPUs: one
end to end, one whose actor process is SIGKILLed mid-campaign.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from seedzer.campaign.loop import Campaign
from seedzer.coverage.hitmap import HitMap
from seedzer.coverage.spec import CollectorSpec
from seedzer.errors import CampaignError
from seedzer.execute.fake_worker import fake_worker_main
from seedzer.execute.ray_actor import ActorStart, Batch, Tasks, WorkerActor, node_settings
from seedzer.execute.records import Announcement, Death, ExecResult, ExecTask, Stop, TestCaseInfo, WorkerEvent
from seedzer.execute.settings import WorkerSettings
from seedzer.finding.meta import BUG
from seedzer.kernel.common import Observation, Stage
from seedzer.store.corpus import entry_id
from tests.unit.campaign.test_loop_campaigns import Probe, by_symptom, config, events, loader_of, query
from tests.unit.execute.test_orphans import wait_gone
from tests.unit.fake_gate import FakeGate

ROOT = Path(__file__).resolve().parents[3]
TIMEOUTS = {Stage.PASS: 10.0, Stage.BUILD: 10.0, Stage.RUN: 10.0}


# --- no cluster ------------------------------------------------------------------------------------
def remote_copy(info: TestCaseInfo, announce: Announcement | None = None) -> TestCaseInfo:
    """The actor's copy of a test case (pickled across), announced as its worker announces it."""
    copy = TestCaseInfo(info.tc_id, info.task, info.parent, info.level, info.script, info.passes, limits=info.limits)
    if announce is not None:
        copy.script, copy.passes, copy.mutators, copy.announced = (announce.script, announce.passes,
                                                                   list(announce.mutators), True)
    return copy


def test_merge_maps_events_onto_the_campaigns_own_test_cases() -> None:
    from seedzer.execute.ray_pool import merge

    mine = {i: TestCaseInfo(i, "fuzz", "p0", "tir") for i in (1, 2, 3)}
    infos = dict(mine)
    ann = Announcement(1, "mutant", '[{"name": "tirx.Simplify"}]', ("FakeAppend",))
    tc = merge(WorkerEvent("tc", 0, remote_copy(mine[1], ann)), infos, 7)
    assert tc is not None and tc.what == "tc" and tc.worker == 7 and tc.tc is mine[1]
    assert (mine[1].script, mine[1].passes, mine[1].mutators, mine[1].announced) == \
        ("mutant", ann.passes, ["FakeAppend"], True)
    assert 1 in infos  # announced, not answered yet
    result = ExecResult(Observation.ok(), ["line:x"])
    res = merge(WorkerEvent("result", 0, remote_copy(mine[1], ann), result=result), infos, 7)
    assert res is not None and res.tc is mine[1] and res.result is result and 1 not in infos
    assert merge(WorkerEvent("result", 0, remote_copy(mine[1], ann), result=result), infos, 7) is None
    death = Death("signal", Stage.BUILD, "FakePass", "killed by signal SIGSEGV", signal.SIGSEGV)
    ann2 = Announcement(2, "crasher", "[]", ("FakeAppend",))
    dead = merge(WorkerEvent("death", 0, remote_copy(mine[2], ann2), death=death,
                             dropped=(remote_copy(mine[3]),)), infos, 7)
    assert dead is not None and dead.tc is mine[2] and dead.dropped == (mine[3],) and dead.death is death
    assert mine[2].script == "crasher" and mine[2].announced and not mine[3].announced and not infos


KEY = b"campaign-key"


class Driven:
    """The actor class driven as the campaign drives it, without Ray: ``start``, then ``run`` in a thread
    (Ray runs it on the actor's main thread), the test holding the campaign's end of the connection."""

    def __init__(self, actor: WorkerActor, connect: bool = True) -> None:
        self.actor = actor
        self.start = actor.start()
        assert self.start.error is None and self.start.address is not None
        self.thread = threading.Thread(target=actor.run, daemon=True)
        self.thread.start()
        if connect:
            self.connect(KEY)

    def connect(self, key: bytes) -> None:
        """Connect to the actor as the campaign does, with ``key``."""
        assert self.start.address is not None
        self.conn = Client(self.start.address, "AF_INET", authkey=key)

    def answers(self, want: int, batch: list[tuple[Any, TestCaseInfo]], marks: list[int] | None = None,
                seconds: float = 60.0) -> list[WorkerEvent]:
        """Send ``batch``, then take events until ``want`` of them are results or deaths."""
        self.conn.send(Tasks(batch, marks or []))
        got: list[WorkerEvent] = []
        deadline = time.monotonic() + seconds
        while sum(ev.what != "tc" for ev in got) < want and time.monotonic() < deadline:
            if self.conn.poll(1.0):
                answer = self.conn.recv()
                assert isinstance(answer, Batch) and answer.error is None
                got += answer.events
        return got

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(Stop())
        self.thread.join(10)
        self.conn.close()


def exec_batch(scripts: list[str], first: int = 1) -> list[tuple[Any, TestCaseInfo]]:
    return [(ExecTask(first + i, "tir", s, "[]"), TestCaseInfo(first + i, "exec", None, "tir", s, "[]"))
            for i, s in enumerate(scripts)]


def test_actor_runs_a_batch_and_forwards_its_workers_crash(tmp_path: Path) -> None:
    """The actor class without Ray: its pool's worker (named by the campaign's index 5, log included)
    runs a batch in order; a segfault kills the worker, never the actor: the death comes back with
    the announced test case and the task that waited in the dead worker's pipe (dropped, as the local
    pool drops it), and the restarted worker runs the next batch."""
    logs = tmp_path / "logs"
    logs.mkdir()
    actor = WorkerActor(5, SimpleNamespace(lines=4, log_dir=str(logs)), TIMEOUTS, fake_worker_main, [str(tmp_path)],
                        authkey=KEY)
    driven = Driven(actor)
    start = driven.start
    try:
        assert start.pid == os.getpid() and start.log_dir == str(logs)
        assert start.address is not None and start.address[0] == "127.0.0.1"
        first_pid = start.pids[0]
        assert first_pid is not None
        events = driven.answers(2, exec_batch(["a", "b\nCRASH", "c"]))
        answers = [ev for ev in events if ev.what != "tc"]
        assert [(ev.what, ev.tc.tc_id if ev.tc else None, ev.worker) for ev in answers] == \
            [("result", 1, 5), ("death", 2, 5)]
        death = answers[1].death
        assert death is not None and death.cause == "signal" and death.signal == signal.SIGSEGV
        assert death.stage is Stage.BUILD and answers[1].tc is not None and answers[1].tc.script == "b\nCRASH"
        assert [d.tc_id for d in answers[1].dropped] == [3]
        (after,) = [ev for ev in driven.answers(1, exec_batch(["d"], first=4)) if ev.what != "tc"]
        assert after.what == "result" and after.result is not None and "line:d" in after.result.features
        second_pid = actor.pids()[0]
        assert (logs / "worker-5.log").exists() and second_pid not in (None, first_pid, os.getpid())
    finally:
        driven.close()
    assert not driven.thread.is_alive() and actor.pool is None  # Stop ends run(), and its worker with it
    assert second_pid is not None and wait_gone(second_pid, 10)


def test_actor_serves_only_the_connection_holding_the_campaigns_key(tmp_path: Path) -> None:
    """A connection without the campaign's key is turned away; the campaign's is served after it. A
    campaign gone without a word (its connection closed) ends ``run`` and the worker as ``Stop`` does."""
    actor = WorkerActor(0, SimpleNamespace(lines=4, log_dir=None), TIMEOUTS, fake_worker_main, [str(tmp_path)],
                        authkey=KEY)
    driven = Driven(actor, connect=False)
    with pytest.raises(AuthenticationError):
        driven.connect(b"not the key")
    driven.connect(KEY)
    results = [ev for ev in driven.answers(1, exec_batch(["a"])) if ev.what == "result"]
    assert [ev.tc.tc_id for ev in results if ev.tc is not None] == [1]
    worker = actor.pids()[0]
    driven.conn.close()
    driven.thread.join(10)
    assert not driven.thread.is_alive() and worker is not None and wait_gone(worker, 10)


def test_actor_refuses_a_pool_unreadable_on_its_node(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "pool"
    start = WorkerActor(0, SimpleNamespace(lines=4, log_dir=None), TIMEOUTS, fake_worker_main, [str(missing)]).start()
    assert isinstance(start, ActorStart) and start.error is not None and str(missing) in start.error
    assert "\n" not in start.error and "same path on every node" in start.error


def test_an_actor_listens_on_loopback_on_the_campaigns_machine_and_on_its_node_address_elsewhere() -> None:
    class OnNode(WorkerActor):
        def node_address(self) -> str:
            return "10.0.0.2"

    def listens(campaign_host: str | None) -> str:
        return OnNode(0, None, TIMEOUTS, campaign_host=campaign_host).listen_address()

    assert listens("10.0.0.2") == "127.0.0.1"  # the campaign's own machine: nothing outside may reach it
    assert listens("10.0.0.1") == "10.0.0.2"  # another machine: the address the cluster knows the node by
    assert listens(None) == "127.0.0.1"


def test_node_settings_keep_shared_paths_and_replace_missing_ones(tmp_path: Path) -> None:
    """Paths that exist on the node (same machine, shared file system) stay; a missing log folder
    becomes a node-local one, a missing hit map a node-local copy with the campaign's known blocks."""
    shared = tmp_path / "campaign"
    (shared / "logs").mkdir(parents=True)
    HitMap.create(shared / "coverage.hitmap", 16)
    spec = CollectorSpec("breakpoints", {"hitmap": str(shared / "coverage.hitmap"), "library": "x"})
    here = WorkerSettings(collector=spec, log_dir=str(shared / "logs"))
    local_dir = tmp_path / "node"
    local_dir.mkdir()
    same, local = node_settings(here, lambda: str(local_dir), 16, [3])
    assert local is None and same.log_dir == here.log_dir and same.collector == spec
    away = WorkerSettings(collector=CollectorSpec("breakpoints", {**spec.options, "hitmap": "/gone/coverage.hitmap"}),
                          log_dir="/gone/logs")
    moved, local = node_settings(away, lambda: str(local_dir), 16, [3, 9])
    assert moved.log_dir == str(local_dir) and local == str(local_dir / "coverage.hitmap")
    assert moved.collector is not None and moved.collector.options == {**spec.options, "hitmap": local}
    assert away.log_dir == "/gone/logs"  # the campaign's settings are left alone
    assert HitMap(local, 16).array.nonzero()[0].tolist() == [3, 9]


# --- through a private Ray instance ------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    """A private Ray instance on 127.0.0.1 with two CPUs, shared by this module's campaigns."""
    from seedzer.execute.ray_cluster import connect, disconnect

    info = connect(None, num_cpus=2, private=True)
    assert info.cpus >= 2
    yield
    disconnect()


pytestmark = pytest.mark.usefixtures("restore_signals")


def ray_campaign(out: Path, pool: Path, scripts: list[str], until: Callable[[Campaign], bool],
                 resume: bool = False) -> Campaign:
    """A two-worker campaign on the fake worker whose workers are Ray actors."""
    from seedzer.execute.ray_pool import RayWorkerPool

    def executor(jobs: int, settings: WorkerSettings, limits: dict[Stage, float]) -> Any:
        fake = SimpleNamespace(lines=40, log_dir=settings.log_dir, collector=None)
        return RayWorkerPool(jobs, fake, limits, target=fake_worker_main, paths=[str(pool)])

    cfg = config()
    cfg.fuzz.jobs = 2
    cfg.fuzz.minutes = 2.0  # a safety net
    probe = Probe(until)
    camp = Campaign(out, pool, cfg, resume=resume, monitor=probe, executor=executor, seed_loader=loader_of(scripts),
                    gate=FakeGate(by_symptom))
    probe.campaign = camp
    return camp


def stored(out: Path) -> tuple[set[str], dict[str, int]]:
    """Corpus entry ids and findings (signature -> occurrences) in campaign.db."""
    db = out / "campaign.db"
    return ({r[0] for r in query(db, "SELECT id FROM corpus")},
            {r[0]: r[1] for r in query(db, "SELECT signature, count FROM findings")})


def test_a_campaign_through_ray_keeps_one_corpus_coverage_and_findings(ray_local: None, tmp_path: Path,
                                                                       pool: Path) -> None:
    """Two actors run one campaign: corpus entries come from both, coverage is the campaign's union,
    a crash inside an actor's worker is filed once however often it recurs, an error likewise."""
    out = tmp_path / "camp"
    # until both actors kept an entry too: on a busy machine one actor may start long after the other
    c = ray_campaign(out, pool, ["a", "x\nERROR", "y\nCRASH"],
                     lambda c: c.stats.execs >= 150 and len(c.stats.unique) == 2 and len(c.corpus) >= 12
                     and {e.worker for e in c.corpus.entries if e.worker is not None} == {0, 1})
    stats = c.run()
    assert stats.execs >= 150 and stats.unique == {"exception": 1, "crash": 1}
    ids, findings = stored(out)
    assert ids == {e.seed_id for e in c.corpus.entries} and len(ids) == stats.corpus >= 12
    assert {e.worker for e in c.corpus.entries if e.worker is not None} == {0, 1}
    features = {r[0] for r in query(out / "campaign.db", "SELECT feature FROM coverage_features")}
    assert len(features) == stats.coverage  # one coverage map: every feature once, whoever reached it
    ran = [e for e in c.corpus.entries if "CRASH" not in e.script]  # a crashing seed reports nothing
    assert {f"line:{ln}" for e in ran for ln in e.script.splitlines()} <= features
    assert len(findings) == 2 and max(findings.values()) > 1  # recurring, deduplicated by the campaign
    verdicts = query(out / "campaign.db", "SELECT symptom, verdict FROM findings ORDER BY symptom")
    assert verdicts == [("crash", BUG), ("exception", BUG)]
    crashes = events(out, "worker_restart")
    assert crashes and all(d["kind"] == "signal" and d["signal"] == signal.SIGSEGV for d in crashes)
    assert stats.restarts == len(crashes) and not events(out, "worker_killed")
    assert entry_id("tir", "a") in ids
    pids = events(out, "workers")[0]["pids"]  # the actors' workers (None: an actor not started within
    # START_SECONDS, as on a loaded machine; it starts later and the campaign does not wait for it)
    assert len(pids) == 2 and all(pid is None or (isinstance(pid, int) and pid != os.getpid()) for pid in pids)
    assert (out / "logs" / "worker-0.log").exists() and (out / "logs" / "worker-1.log").exists()


def test_sigkill_of_an_actor_loses_nothing_already_reported(ray_local: None, tmp_path: Path, pool: Path) -> None:
    """An actor's process SIGKILLed mid-campaign (as a node dies): the campaign goes on with a new actor,
    counts the restart, files nothing for it, and keeps every corpus entry and finding it had; the
    killed actor's worker dies with it (it does not run on, orphaned, on the node)."""
    out = tmp_path / "camp"
    seen: dict[str, Any] = {}

    def step(c: Campaign) -> bool:
        from seedzer.execute.ray_pool import RayWorkerPool

        pool_ = c.executor
        assert isinstance(pool_, RayWorkerPool)
        if "killed" not in seen and c.stats.execs >= 60 and c.stats.unique and None not in pool_.actor_pids():
            pid = pool_.actor_pids()[1]
            assert pid is not None
            c.snapshot()  # what the campaign reported so far, on disk
            seen.update(killed=pid, worker=pool_.pids()[1], execs=c.stats.execs, stored=stored(out))
            os.kill(pid, signal.SIGKILL)
        return "killed" in seen and c.stats.execs >= seen["execs"] + 120 and c.stats.restarts >= 1 and \
            pool_.actor_pids()[1] not in (None, seen["killed"])

    c = ray_campaign(out, pool, ["a", "x\nERROR"], step)
    stats = c.run()
    assert "killed" in seen
    ids, findings = stored(out)
    ids_before, findings_before = seen["stored"]
    assert ids_before and ids_before <= ids and findings_before and set(findings_before) <= set(findings)
    assert all(findings[s] >= n for s, n in findings_before.items())
    killed = events(out, "worker_killed")
    assert len(killed) == 1 and killed[0]["worker"] == 1 and killed[0]["kind"] == "killed"
    assert stats.restarts == 1 and stats.unique == {"exception": 1}
    assert seen["worker"] is not None and wait_gone(seen["worker"], 10)


def test_an_actor_the_campaign_cannot_reach_stops_it_with_a_one_line_error(ray_local: None, pool: Path) -> None:
    """A node whose port the campaign cannot reach (a firewall) loses its actor before it ever answers;
    after ACTOR_SETUP_DEATHS of them the campaign stops with one line naming the address, not retrying
    forever."""
    from seedzer.execute.ray_pool import ACTOR_SETUP_DEATHS, NodeWorkerActor, RayWorkerPool

    with socket.socket() as closed:  # a port nobody listens on once this socket is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]

    class Unreachable(NodeWorkerActor):
        def start(self) -> ActorStart:
            started = super().start()
            assert started.address is not None
            return dataclasses.replace(started, address=(started.address[0], port))

    ray_pool = RayWorkerPool(1, SimpleNamespace(lines=4, log_dir=None, collector=None), TIMEOUTS,
                             target=fake_worker_main, paths=[str(pool)], actor_class=Unreachable)
    try:
        with pytest.raises(CampaignError) as err:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                ray_pool.poll(1.0)
        message = str(err.value)
        assert f"lost {ACTOR_SETUP_DEATHS} times in a row before it answered once" in message
        assert f"cannot connect to 127.0.0.1:{port}" in message and "\n" not in message
    finally:
        ray_pool.close()


def test_a_ray_campaign_resumes_as_any_campaign(ray_local: None, tmp_path: Path, pool: Path) -> None:
    """What campaign.db holds is the same with Ray: a stopped campaign resumes (through Ray again) with
    its corpus, findings and executions, and goes on counting."""
    out = tmp_path / "camp"
    first = ray_campaign(out, pool, ["a", "x\nERROR"], lambda c: c.stats.execs >= 40 and bool(c.stats.unique)).run()
    ids, findings = stored(out)
    again = ray_campaign(out, pool, ["a", "x\nERROR"], lambda c: c.stats.execs >= first.execs + 40,
                         resume=True).run()
    ids_after, findings_after = stored(out)
    assert ids <= ids_after and set(findings) == set(findings_after) and again.execs >= first.execs + 40
    assert again.unique == first.unique == {"exception": 1} and len(events(out, "resume")) == 1


# --- the command line ------------------------------------------------------------------------------
def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def proc_environment(pid: int) -> tuple[dict[str, str], int]:
    """A process's environment variables and niceness, read from /proc."""
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    env = dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)
    return env, os.getpriority(os.PRIO_PROCESS, pid)


def test_an_actors_worker_runs_in_the_campaigns_environment(ray_local: None, tmp_path: Path, pool: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray runs an actor at niceness 15 with ``OMP_NUM_THREADS`` set to its CPUs (TVM's runtime sizes
    its thread pool by it): the worker the actor forks has the campaign's values instead, so a test case
    runs as in a local campaign."""
    from seedzer.execute.ray_pool import RayWorkerPool

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("TVM_NUM_THREADS", "3")
    ray_pool = RayWorkerPool(1, SimpleNamespace(lines=4, log_dir=None, collector=None), TIMEOUTS,
                             target=fake_worker_main, paths=[str(pool)])
    try:
        deadline = time.monotonic() + 120
        while ray_pool.pids() == [None] and time.monotonic() < deadline:
            ray_pool.poll(1.0)
        (pid,) = ray_pool.pids()
        (actor,) = ray_pool.actor_pids()
        assert pid is not None and actor is not None
        _, actor_niceness = proc_environment(actor)  # Ray's 15 for its workers
        env, niceness = proc_environment(pid)
        assert "OMP_NUM_THREADS" not in env and env.get("TVM_NUM_THREADS") == "3"
        may_lower = os.geteuid() == 0  # without the privilege a niceness cannot be lowered, and stays
        assert niceness == (os.nice(0) if may_lower else actor_niceness)
    finally:
        ray_pool.close()


def test_fuzz_without_ray_imports_no_ray() -> None:
    out = _python("""
        import sys
        from click.testing import CliRunner
        import seedzer.cli, seedzer.campaign.loop, seedzer.execute.worker_pool, seedzer.execute.ray_actor
        result = CliRunner().invoke(seedzer.cli.main, ["fuzz", "--help"])
        assert result.exit_code == 0 and "--ray [ADDRESS]" in result.output, result.output
        assert "ray" not in sys.modules, "ray was imported"
        print("ok")
    """)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_fuzz_ray_without_ray_installed_is_a_one_line_error(tmp_path: Path, pool: Path) -> None:
    camp = tmp_path / "camp"
    out = _python(f"""
        import sys
        sys.modules["ray"] = None  # as if the extra were not installed
        from click.testing import CliRunner
        import seedzer.cli
        for extra in (["--ray"], ["--ray", "127.0.0.1:1"]):
            result = CliRunner().invoke(seedzer.cli.main, ["fuzz", "--pool", {str(pool)!r}, "--out", {str(camp)!r},
                                                           "--minutes", "1", *extra])
            print(result.exit_code, result.output.strip().splitlines()[-1])
    """)
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0 and len(lines) == 2, out.stderr
    for line in lines:
        code, message = line.split(" ", 1)
        assert code == "2" and "Ray is not installed" in message and "pip install 'seedzer[ray]'" in message
    assert not (camp / "campaign.db").exists(), "no campaign started"
