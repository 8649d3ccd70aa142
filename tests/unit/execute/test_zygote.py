"""The zygote's children never run the parent's main script again (multiprocessing does that in
every child it starts, and the zygote's preload of ``__main__`` never worked on Python before 3.13)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_zygote_child_does_not_run_the_parents_main_script_again(tmp_path: Path) -> None:
    count = tmp_path / "runs.txt"
    script = tmp_path / "main_script.py"
    script.write_text(
        "import os\n"
        f"with open({str(count)!r}, 'a') as f:\n"
        "    f.write('ran\\n')\n"
        "if __name__ == '__main__':\n"
        "    from seedzer.execute.isolated_call import run_isolated\n"
        "    pids = {run_isolated(os.getpid).value for _ in range(3)}\n"
        "    assert len(pids) == 3 and os.getpid() not in pids, pids\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert count.read_text().count("ran") == 1  # the parent's own run: three children used to make it four
