"""The CPU-share governor of the epoch generator (seedzer.generate.cpu_share)."""

from __future__ import annotations

import pytest

from seedzer.generate.cpu_share import CpuGovernor, process_cpu


class Clocks:
    """A fake process: CPU and wall clocks it advances, and a sleep that advances only the wall."""

    def __init__(self) -> None:
        self.cpu_s, self.wall_s = 0.0, 0.0

    def cpu(self) -> float:
        return self.cpu_s

    def wall(self) -> float:
        return self.wall_s

    def sleep(self, seconds: float) -> None:
        self.wall_s += seconds

    def work(self, seconds: float) -> None:
        self.cpu_s += seconds
        self.wall_s += seconds


@pytest.mark.parametrize("share", [0.1, 0.25, 0.5, 1.0])
def test_paced_work_keeps_its_cpu_within_the_share_of_wall_time(share: float) -> None:
    clocks = Clocks()
    gov = CpuGovernor(share, clocks.cpu, clocks.wall, clocks.sleep)
    for _ in range(50):
        gov.pace()
        clocks.work(0.3)
    gov.pace()
    assert gov.ratio() == pytest.approx(share, rel=1e-6)


def test_the_cpu_of_a_child_and_of_what_it_reaped_counts() -> None:
    import subprocess
    import sys

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    # a child that forks a grandchild, reaps it, then lives on: the grandchild's CPU is the child's cutime
    code = ("import os, time\npid = os.fork()\nif pid == 0:\n    exec(" + repr(burn) + ")\n    os._exit(0)\n"
            "os.waitpid(pid, 0)\nprint('reaped', flush=True)\ntime.sleep(30)\n")
    before = process_cpu()
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "reaped"
        assert process_cpu() - before >= 0.25
    finally:
        child.kill()
        child.wait()


def test_no_sleep_while_under_the_share() -> None:
    clocks = Clocks()
    gov = CpuGovernor(0.5, clocks.cpu, clocks.wall, clocks.sleep)
    clocks.sleep(10.0)
    clocks.work(1.0)
    assert gov.pace() == 0.0


def test_a_share_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="cpu share"):
        CpuGovernor(0.0)


def test_a_real_busy_process_is_held_to_its_share() -> None:
    gov = CpuGovernor(0.5)
    for _ in range(5):
        gov.pace()
        start = process_cpu()
        while process_cpu() - start < 0.04:  # burn 40 ms of CPU
            pass
    gov.pace()
    assert gov.ratio() <= 0.5 * 1.1
