"""The Ray trial launcher's parts that need no cluster: the mailbox's protocol, shared-file-system
detection, and Ray staying optional (never imported without --ray; a one-line error when missing)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from seedzer.experiment.launch import lock_dir
from seedzer.experiment.progress import Snapshot
from seedzer.experiment.ray_mailbox import Mailbox, MailboxEntry, TaskReport
from seedzer.experiment.ray_trials import NODE_PREFIX, TOKEN, TrialTask, pool_files, shares_files, sweep_stale

ROOT = Path(__file__).resolve().parents[3]


def test_mailbox_carries_reports_orders_and_only_newer_checkpoints() -> None:
    box = Mailbox()
    snap = Snapshot(1.5, 10, 100, 3, 0)
    report = TaskReport(7, "node-a", False, snap)
    assert box.report("t#1", report) is None
    box.checkpoint("t#1", 1, b"one")
    assert box.fetch("t#1", 0) == MailboxEntry(report, None, (1, b"one"))
    assert box.fetch("t#1", 1).checkpoint is None, "already unpacked"
    assert box.fetch("t#1", 1).report == report
    box.order("t#1", "stop")
    assert box.report("t#1", report) == "stop"
    box.order("t#1", "kill")
    box.order("t#1", "stop")
    assert box.report("t#1", report) == "kill", "a kill is never downgraded to a stop"
    assert box.report("t#2", report) is None, "orders are per task"
    box.forget("t#1")
    assert box.fetch("t#1", -1) == MailboxEntry()


def _task(trial: Path, pool: Path, token: str | None, files: list[tuple[str, int]]) -> TrialTask:
    return TrialTask("k", ["python"], str(trial), str(pool), token, files, "/", sys.executable)


def test_a_node_shares_files_only_with_the_token_and_the_same_pool(tmp_path: Path) -> None:
    trial, pool = tmp_path / "trial", tmp_path / "pool"
    trial.mkdir()
    pool.mkdir()
    (pool / "m.onnx").write_bytes(b"12345")
    (trial / TOKEN).write_text("abc")
    files = pool_files(pool)
    assert files == [("m.onnx", 5)]
    assert shares_files(_task(trial, pool, "abc", files))
    assert not shares_files(_task(trial, pool, "abd", files)), "another head's token (a different machine)"
    assert not shares_files(_task(trial, pool, None, files)), "shipping forced"
    assert not shares_files(_task(trial, pool, "abc", [("m.onnx", 6)])), "a different pool at that path"
    assert not shares_files(_task(tmp_path / "nowhere", pool, "abc", files))


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_without_ray_option_nothing_imports_ray() -> None:
    out = _python("""
        import sys
        from click.testing import CliRunner
        import seedzer.cli, seedzer.commands.experiment, seedzer.experiment.trials
        import seedzer.experiment.launch, seedzer.experiment.shipping
        result = CliRunner().invoke(seedzer.cli.main, ["experiment", "run", "--help"])
        assert result.exit_code == 0 and "--ray [ADDRESS]" in result.output, result.output
        assert "ray" not in sys.modules, "ray was imported"
        print("ok")
    """)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_ray_missing_is_a_one_line_error(tmp_path: Path) -> None:
    exp = tmp_path / "e.yaml"
    exp.write_text("name: e\nheuristics: [basic]\ntrials: 1\nminutes: 1\n")
    out = _python(f"""
        import sys
        sys.modules["ray"] = None  # as if the extra were not installed
        from click.testing import CliRunner
        import seedzer.cli
        for extra in (["--ray"], ["--ray", "127.0.0.1:1"]):
            result = CliRunner().invoke(seedzer.cli.main, ["experiment", "run", {str(exp)!r}, *extra,
                                                           "--results", {str(tmp_path / "r")!r}])
            print(result.exit_code, result.output.strip().splitlines()[-1])
    """)
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0 and len(lines) == 2, out.stderr
    for line in lines:
        code, message = line.split(" ", 1)
        assert code != "0" and "Ray is not installed" in message and "pip install 'seedzer[ray]'" in message
    assert not (tmp_path / "r").exists(), "nothing ran"


def test_a_sweep_removes_only_copies_whose_task_died_and_whose_campaign_stopped(tmp_path: Path) -> None:
    """A shipped trial's node-local copy outlives a task whose Ray worker was SIGKILLed: the next task
    on the node removes it, but never the copy of a live task or of a campaign still holding its lock."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = child.pid  # a process that has exited (and was reaped)
    stale = tmp_path / f"{NODE_PREFIX}{dead}-abc"
    live = tmp_path / f"{NODE_PREFIX}{os.getpid()}-def"
    locked = tmp_path / f"{NODE_PREFIX}{dead}-ghi"
    for path in (stale, live, locked):
        (path / "trial").mkdir(parents=True)
        (path / "pool").mkdir()
    (stale / "trial" / ".lock").write_text("")
    holder = lock_dir(locked / "trial", 0.0)  # a campaign still stopping
    assert holder is not None
    try:
        assert sweep_stale(tmp_path) == [stale]
    finally:
        holder.close()
    assert not stale.exists() and live.exists() and locked.exists()
    assert sweep_stale(tmp_path) == [locked], "once its campaign let go of the lock"
