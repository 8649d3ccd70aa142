"""DirLock: one writer per directory, refused in one line naming the holder, free again when it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from seedzer.errors import SeedzerError
from seedzer.store.lock import LOCK_NAME, DirLock, LockError, is_locked, read_holder

ROOT = Path(__file__).resolve().parents[3]


def _python(code: str) -> subprocess.Popen[str]:
    """A Python child that prints one line per event (``locked``, ``forked <pid>``...)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True,
                            env=env)


def _holder(directory: Path, command: str = "seedzer fuzz --out c") -> subprocess.Popen[str]:
    proc = _python(f"""
        import time
        from seedzer.store.lock import DirLock
        DirLock({str(directory)!r}, what="campaign", command={command!r}).acquire()
        print("locked", flush=True)
        time.sleep(120)
        """)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_acquire_creates_the_directory_and_records_the_holder(tmp_path: Path) -> None:
    with DirLock(tmp_path / "a" / "b", what="campaign", command="seedzer fuzz --out b") as lock:
        assert lock.held and (tmp_path / "a" / "b" / LOCK_NAME).is_file()
        holder = read_holder(tmp_path / "a" / "b")
        assert holder["pid"] == str(os.getpid()) and holder["command"] == "seedzer fuzz --out b"
        assert "since" in holder
    assert not lock.held


def test_a_second_process_is_refused_in_one_line_naming_the_holder(tmp_path: Path) -> None:
    proc = _holder(tmp_path / "c")
    try:
        assert is_locked(tmp_path / "c")
        with pytest.raises(LockError) as info:
            DirLock(tmp_path / "c", what="campaign").acquire()
        msg = str(info.value)
        assert isinstance(info.value, SeedzerError) and "\n" not in msg
        assert msg.startswith(f"campaign {tmp_path / 'c'} is in use by seedzer process {proc.pid} "
                              "('seedzer fuzz --out c', since ")
        assert msg.endswith("); wait for it to end or stop it")
    finally:
        _stop(proc)


def test_a_killed_holder_leaves_a_lock_that_is_simply_free(tmp_path: Path) -> None:
    proc = _holder(tmp_path / "c")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert read_holder(tmp_path / "c")["pid"] == str(proc.pid)  # the stale line is still there...
    assert not is_locked(tmp_path / "c")
    with DirLock(tmp_path / "c", what="campaign"):  # ...but the kernel released the lock itself
        assert read_holder(tmp_path / "c")["pid"] == str(os.getpid())


def test_reentrant_within_a_process(tmp_path: Path) -> None:
    outer = DirLock(tmp_path / "p", what="pool").acquire()
    with DirLock(tmp_path / "p" / ".." / "p", what="pool"):  # same real path: nests
        pass
    assert outer.held
    proc = _python(f"""
        from seedzer.store.lock import DirLock, LockError
        try:
            DirLock({str(tmp_path / 'p')!r}).acquire()
            print("acquired", flush=True)
        except LockError:
            print("refused", flush=True)
        """)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "refused"  # still held by outer
    proc.wait()
    outer.release()
    outer.release()  # a second release is a no-op
    with DirLock(tmp_path / "p"):
        pass


def test_a_forked_child_never_keeps_the_lock(tmp_path: Path) -> None:
    proc = _python(f"""
        import os, time
        from seedzer.store.lock import DirLock
        DirLock({str(tmp_path / 'c')!r}).acquire()
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        print("forked", child, flush=True)
        time.sleep(120)
        """)
    assert proc.stdout is not None
    word, child = proc.stdout.readline().split()
    try:
        assert word == "forked" and is_locked(tmp_path / "c")
        os.kill(proc.pid, signal.SIGKILL)  # the parent dies; its forked child lives on
        proc.wait()
        os.kill(int(child), 0)
        deadline = time.monotonic() + 10
        while is_locked(tmp_path / "c"):
            assert time.monotonic() < deadline, "the child kept the lock"
            time.sleep(0.05)
        with DirLock(tmp_path / "c"):
            pass
    finally:
        os.kill(int(child), signal.SIGKILL)


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_lock_file_that_is_a_link_is_refused_and_its_target_untouched(tmp_path: Path, kind: str) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    d = tmp_path / "d"
    d.mkdir()
    if kind == "symlink":
        (d / LOCK_NAME).symlink_to(victim)
    else:
        os.link(victim, d / LOCK_NAME)
    with pytest.raises(LockError, match=r"cannot lock it|not a plain lock file") as info:
        DirLock(d).acquire()
    assert "\n" not in str(info.value)
    assert victim.read_text() == "precious\n"


def test_errors_name_the_directory(tmp_path: Path) -> None:
    with pytest.raises(LockError, match=rf"^pool {tmp_path / 'missing'}: no such directory$"):
        DirLock(tmp_path / "missing", what="pool", create=False).acquire()
    (tmp_path / "file").write_text("x")
    with pytest.raises(LockError, match=rf"^pool {tmp_path / 'file' / 'sub'}: cannot create the directory"):
        DirLock(tmp_path / "file" / "sub", what="pool").acquire()
