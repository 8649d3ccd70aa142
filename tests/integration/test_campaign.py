"""Real campaigns (real TVM, real loader, real mutators) driven through the CLI.

Must-show of the spine: a worker killed with SIGKILL is recorded and replaced while the campaign
goes on; a campaign killed with SIGKILL resumes in the same directory with every finding and corpus
entry it had reported; bad inputs end in one-line errors.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def seedzer(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "seedzer.cli", *args], capture_output=True, text=True,
                          timeout=600, **kw)  # type: ignore[call-overload]


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "seedzer.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def query(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def wait_for(pred, timeout: float, what: str):  # type: ignore[no-untyped-def]
    end = time.time() + timeout
    while time.time() < end:
        try:
            got = pred()
        except sqlite3.Error:
            got = None
        if got:
            return got
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_worker_kill_then_campaign_kill_then_resume(tiny_pool: Path, tmp_path: Path) -> None:
    out = tmp_path / "camp"
    proc = start("fuzz", "--pool", str(tiny_pool), "--out", str(out), "--minutes", "3", "--monitor", "plain")
    db = out / "campaign.db"
    try:
        pids = wait_for(lambda: query(db, "SELECT detail FROM events WHERE kind='workers'"), 120, "workers")
        worker = json.loads(pids[0][0])["pids"][0]
        wait_for(lambda: query(db, "SELECT execs FROM snapshots WHERE execs > 5"), 120, "executions")
        os.kill(worker, signal.SIGKILL)
        # SIGKILL (the OOM killer or an operator) is an event with memory figures, never a crash finding
        killed = wait_for(lambda: query(db, "SELECT detail FROM events WHERE kind='worker_killed'"), 60,
                          "a worker_killed event")
        detail = json.loads(killed[0][0])
        assert detail["signal"] == signal.SIGKILL and detail["kind"] == "killed"
        assert detail["available_mb"] is not None and detail["rss_mb"] is not None
        # the campaign goes on after the restart: executions keep growing
        before = query(db, "SELECT MAX(execs) FROM snapshots")[0][0]
        wait_for(lambda: query(db, f"SELECT execs FROM snapshots WHERE execs > {before + 3}"), 120,
                 "executions after the restart")
        wait_for(lambda: query(db, "SELECT COUNT(*) FROM corpus")[0][0] > 3, 60, "corpus entries")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    corpus_before = {r[0] for r in query(db, "SELECT id FROM corpus")}
    findings_before = {r[0] for r in query(db, "SELECT signature FROM findings")}
    elapsed_before = query(db, "SELECT MAX(time) FROM snapshots")[0][0]
    assert corpus_before

    again = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(out), "--minutes", "3", "--monitor", "quiet")
    assert "already exists" in again.stderr and again.returncode == 2

    resumed = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(out),
                      "--minutes", str(elapsed_before / 60 + 0.3), "--resume", "--monitor", "quiet")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    corpus_after = {r[0] for r in query(db, "SELECT id FROM corpus")}
    findings_after = {r[0] for r in query(db, "SELECT signature FROM findings")}
    assert corpus_before <= corpus_after and findings_before <= findings_after
    for (path,) in query(db, "SELECT path FROM corpus"):
        assert (out / path).is_file()
    for (folder,) in query(db, "SELECT dir FROM findings"):
        assert (out / folder / "meta.json").is_file()
    for (folder,) in query(db, "SELECT dir FROM findings WHERE symptom='crash'"):  # a real TVM crash at most
        assert json.loads((out / folder / "meta.json").read_text())["observation"]["signal"] != signal.SIGKILL
    assert query(db, "SELECT COUNT(*) FROM events WHERE kind='worker_killed'")[0][0] == 1
    assert query(db, "SELECT MAX(time) FROM snapshots")[0][0] > elapsed_before
    assert query(db, "SELECT COUNT(*) FROM events WHERE kind='resume'")[0][0] == 1
    assert "Seedzer campaign summary" in resumed.stdout


def test_missing_pool_is_one_line(tmp_path: Path) -> None:
    r = seedzer("fuzz", "--pool", str(tmp_path / "nope"), "--out", str(tmp_path / "c"), "--minutes", "1")
    assert r.returncode == 2
    assert r.stderr.strip() == f"error: {tmp_path / 'nope'}: seed pool directory does not exist"


def test_unwritable_out_dir_is_one_line(tiny_pool: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(blocker / "camp"), "--minutes", "1")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(blocker / "camp") in lines[0]
    assert "not writable" in lines[0] or "cannot create the directory" in lines[0]  # the lock creates it first


def test_invalid_yaml_is_one_line(tiny_pool: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("fuzz:\n  minutes: [\n")
    r = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(tmp_path / "c"), "--config", str(cfg))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(cfg) in lines[0] and "invalid YAML" in lines[0]


def test_corrupt_model_in_pool(tiny_pool: Path, tmp_path: Path) -> None:
    """A corrupt model is skipped with a one-line warning naming it; the campaign still runs."""
    bad = tiny_pool / "corrupt.onnx"
    bad.write_bytes(b"\x08\x07garbage-not-a-protobuf" * 3)
    manifest = json.loads((tiny_pool / "manifest.json").read_text())
    manifest["models"].insert(0, {"file": "corrupt.onnx"})
    (tiny_pool / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "c"
    r = seedzer("fuzz", "--pool", str(tiny_pool), "--out", str(out), "--minutes", "0.2", "--monitor", "plain")
    assert r.returncode == 0, r.stderr[-2000:]
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and str(bad) in warnings[0]
    status = query(out / "campaign.db", "SELECT model, status FROM models")
    assert ("corrupt.onnx", "failed") in status


def test_pool_of_only_corrupt_models_is_one_line(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "bad.onnx").write_bytes(b"not onnx")
    r = seedzer("fuzz", "--pool", str(pool), "--out", str(tmp_path / "c"), "--minutes", "0.2",
                "--monitor", "quiet")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == f"error: {pool}: no usable seeds (1 models, none could be loaded)"


def test_ctrl_c_while_loading_stops_at_once_and_resume_loads_the_rest(tmp_path: Path) -> None:
    from tests.integration.conftest import conv_model, matmul_model, relu_add_model, write_pool

    models = {f"m{i}_{name}.onnx": make() for i in range(3)
              for name, make in (("relu", relu_add_model), ("conv", conv_model), ("mm", matmul_model))}
    pool = write_pool(tmp_path / "pool", models)
    out = tmp_path / "camp"
    db = out / "campaign.db"
    proc = start("fuzz", "--pool", str(pool), "--out", str(out), "--minutes", "0.2", "--monitor", "plain")
    try:
        wait_for(lambda: query(db, "SELECT count(*) FROM models")[0][0] >= 1, 180, "a first model loaded")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0, proc.stdout.read() if proc.stdout else ""
    finally:
        if proc.poll() is None:
            proc.kill()
    loaded = query(db, "SELECT count(*) FROM models")[0][0]
    assert 1 <= loaded < len(models)
    done = seedzer("fuzz", "--pool", str(pool), "--out", str(out), "--resume", "--minutes", "0.4",
                   "--monitor", "quiet")
    assert done.returncode == 0, done.stderr
    assert query(db, "SELECT count(*) FROM models")[0][0] == len(models)
