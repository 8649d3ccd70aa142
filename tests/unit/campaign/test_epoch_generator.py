"""The generator process's own parts (seedzer.campaign.epoch_generator) that need no NNSmith run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from seedzer.campaign.epoch_generator import GeneratorJob, _lock, _options, _wait_for, run, write_job
from seedzer.generate.heuristics import load_heuristic


def job(tmp_path: Path, heuristic: str = "basic") -> GeneratorJob:
    generation = load_heuristic(heuristic).generation.to_dict()
    return GeneratorJob(str(tmp_path / "epochs"), 3, 2, 1, heuristic, generation)


def test_the_learned_weights_multiply_the_heuristics_and_weigh_insertions_only_when_it_inserts(
        tmp_path: Path) -> None:
    edge = job(tmp_path, "edge")
    base = load_heuristic("edge").generation.op_weights
    name, weight = next(iter(base.items()))
    opts = _options(edge, {"weights": {name: 0.5, "Relu": 1.5}, "onnx_weights": {"Gelu": 2.0}})
    assert opts.op_weights[name] == weight * 0.5 and opts.op_weights["Relu"] == 1.5
    assert not opts.insert.active and opts.insert.weights == {}
    reach = _options(job(tmp_path, "reach"), {"weights": {}, "onnx_weights": {"Gelu": 2.0}})
    assert reach.insert.weights == {"Gelu": 2.0} and reach.insert.operators == 4


def test_it_stops_waiting_when_the_campaign_is_gone(tmp_path: Path) -> None:
    assert not _wait_for(tmp_path / "weights.json", parent=os.getppid() + 1)
    (tmp_path / "weights.json").write_text("{}")
    assert _wait_for(tmp_path / "weights.json", parent=os.getppid() + 1)


def test_a_second_generator_waits_for_the_lock_and_gives_up_when_its_campaign_is_gone(tmp_path: Path) -> None:
    j = job(tmp_path)
    write_job(j)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom seedzer.store.lock import DirLock\n"
                               f"DirLock({j.out!r}, what='epoch generator').acquire()\nprint('held', flush=True)\n"
                               "time.sleep(60)\n"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert _lock(Path(j.out), parent=os.getppid() + 1) is None
        assert run(j, parent=os.getppid() + 1) == 1
    finally:
        holder.kill()
        holder.wait()
    lock = _lock(Path(j.out), parent=os.getppid())  # free once the holder is gone
    assert lock is not None
    lock.release()
