"""A campaign directory on a real full disk (issue 45 row 5): a tmpfs mounted in a user namespace
(``unshare --user --map-root-user --mount``, no privilege needed), filled to the last byte. A new
campaign there ends with one line and leaves no ``.write-probe`` and no empty folder; ``--resume`` of
a campaign there ends with one line and changes nothing (the ENOSPC cases part-way through a write
are unit tests: tests/unit/campaign/test_directory.py, tests/unit/store/test_atomic.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seedzer.generate.seed_pool import PoolWriter
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB
from tests.unit.generate.test_seed_pool import HEADER, tiny_model

pytestmark = [pytest.mark.integration, pytest.mark.ci_may_skip]

SCRIPT = r"""
set -u
mount -t tmpfs -o size=256k tmpfs "$MNT"
cp -a "$CAMPAIGN" "$MNT/old"
dd if=/dev/zero of="$MNT/fill" bs=4k >/dev/null 2>&1
list() { (cd "$MNT/old" && find . -type f ! -name .seedzer.lock -printf '%p %s\n' | sort \
          && find . -type d | sort && find . -type f ! -name .seedzer.lock -exec md5sum {} + | sort); }
list > "$OUT/before"
"$PY" -m seedzer.cli fuzz --pool "$POOL" --out "$MNT/new" --minutes 0.2 --monitor quiet 2> "$OUT/new.err"
echo $? > "$OUT/new.rc"
(cd "$MNT/new" && find . | sort) > "$OUT/new.tree"
"$PY" -m seedzer.cli fuzz --pool "$POOL" --out "$MNT/old" --minutes 0.2 --resume --monitor quiet 2> "$OUT/old.err"
echo $? > "$OUT/old.rc"
list > "$OUT/after"
"""


def _user_namespaces() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(not _user_namespaces(), reason="unprivileged user namespaces are not available here")
def test_a_full_disk_refuses_new_and_resumed_campaigns_in_one_line_and_changes_nothing(tmp_path: Path) -> None:
    pool = tmp_path / "pool"
    with PoolWriter(pool, HEADER) as writer:
        writer.add_model(0, 0, tiny_model(1))
    old = tmp_path / "campaign"
    old.mkdir()
    for sub in ("corpus", "findings", "logs"):
        (old / sub).mkdir()
    db = CampaignDB(old / "campaign.db")
    db.set_meta("pool", str(pool.resolve()))
    Corpus(old / "corpus", db).add(CorpusEntry("e1", "# a script", "[]", "m.onnx", level="tir"), 0)
    db.close()
    (tmp_path / "mnt").mkdir()
    env = {"MNT": str(tmp_path / "mnt"), "CAMPAIGN": str(old), "OUT": str(tmp_path), "POOL": str(pool),
           "PY": sys.executable, "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", SCRIPT], env=env, timeout=300,
                   check=True)
    new_err = (tmp_path / "new.err").read_text().strip().splitlines()
    assert (tmp_path / "new.rc").read_text().strip() == "2"
    assert new_err == [f"error: {tmp_path / 'mnt' / 'new'}: campaign directory is not writable "
                       "(No space left on device)"]
    assert (tmp_path / "new.tree").read_text().split() == [".", "./.seedzer.lock"]  # no probe, no folder
    old_err = (tmp_path / "old.err").read_text().strip().splitlines()
    assert (tmp_path / "old.rc").read_text().strip() == "2" and len(old_err) == 1, old_err
    assert "No space left on device" in old_err[0] or "disk is full" in old_err[0], old_err
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()  # the lock file aside
