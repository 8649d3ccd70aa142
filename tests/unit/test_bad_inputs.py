"""Bad input, as a careless or hostile user gives it: one ``error:`` line, exit status 2, nothing changed.

Every case runs the real command line (``seedzer.cli.main`` through click's runner) in a fresh
temporary world: a valid pool, a valid campaign, an experiment-like results tree, a sentinel file
next to the destinations and one outside the working directory. The case's set-up spoils one thing;
the command must then

* exit with status 2 and print exactly one line on standard error, ``error: <culprit>: <what>``,
  matching the case's regular expression (no traceback, no "Usage:" block);
* change nothing at all: the whole tree (contents, links, names; lock files by name only, their
  holder line is informational) is hashed before and after.

``test_table_summary`` prints the tally the issue asked for (bad inputs, one-line errors,
tracebacks, silent acceptances, changed trees) and requires the last three to be 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from seedzer.cli import main
from seedzer.generate.seed_pool import PoolWriter
from seedzer.store.db import CampaignDB, CorpusRow
from seedzer.store.lock import LOCK_NAME
from tests.unit.generate.test_seed_pool import HEADER, tiny_model

Setup = Callable[[Path], Any]


@dataclass(frozen=True)
class Case:
    """One bad input: the command line, the world it runs in, the one line it must print."""

    id: str
    args: list[str]
    error: str  # regular expression the text after "error: " must match in full
    setup: Setup | None = None
    code: int = 2


# --- the world ------------------------------------------------------------------------------------


def _write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)


def _manifest(pool: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pool / "manifest.json").read_text())
    return data


def _set_manifest(pool: Path, data: Any) -> None:
    _write(pool / "manifest.json", json.dumps(data))


def _edit_entry(pool: Path, index: int, **changes: Any) -> None:
    data = _manifest(pool)
    data["models"][index].update(changes)
    _set_manifest(pool, data)


def _foreign_sqlite(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    conn.execute("INSERT INTO notes (text) VALUES ('another program')")
    conn.commit()
    conn.close()


def _campaign(directory: Path, pool: Path, features: tuple[str, ...] = ("seq/Simplify:=",)) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    db = CampaignDB(directory / "campaign.db")
    db.set_meta("pool", str(pool.resolve()))
    db.set_meta("config", {"fuzz": {"minutes": 1.0}})
    db.add_features(list(features), 1.0)
    db.close()


def _models_dir(directory: Path, names: dict[str, bytes]) -> None:
    for name, data in names.items():
        _write(directory / name, data)


def _model_bytes(seed: int = 1) -> bytes:
    return tiny_model(seed).onnx_bytes


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The valid world every case starts from (copied per case)."""
    top = tmp_path_factory.mktemp("world")
    root = top / "root"
    with PoolWriter(root / "pool", HEADER) as w:
        for i in range(3):
            w.add_model(i, i, tiny_model(i + 1))
    _campaign(root / "camp", root / "pool", ("seq/Simplify:=", "bp:tvm:10"))
    _campaign(root / "results" / "basic" / "trial-1", root / "pool")
    _write(root / "sentinel.txt", "next to every destination\n")
    _write(root / "good.cov", "# seedzer-coverage-set\n# count: 1\nseq/Simplify:=\n")
    _write(root / "notes.txt", "a user's file\n")
    _write(root / "good.yaml", "fuzz:\n  jobs: 1\n")
    _write(top / "outside.txt", "outside the working directory\n")
    _write(top / "victim.txt", "a victim outside the pool\n")
    return top


def tree_digest(top: Path) -> dict[str, str]:
    """Every path under ``top`` with its content digest (links by target; lock files by name only)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            rel = os.fsdecode(path.relative_to(top))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            elif not path.is_file():
                out[rel] = f"special:{oct(path.stat().st_mode)}"
            elif name == LOCK_NAME:
                out[rel] = "lock"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() + f":{oct(path.stat().st_mode)}"
    return out


# --- set-ups ---------------------------------------------------------------------------------------


def escape_manifest(name: str, key: str = "file") -> Setup:
    return lambda r: _edit_entry(r / "pool", 0, **{key: name})


def corrupt_model(r: Path) -> None:
    (r / "pool" / "model_000001.onnx").write_bytes(b"not the model the manifest hashed")


def missing_model(r: Path) -> None:
    (r / "pool" / "model_000002.onnx").unlink()


def missing_reference(r: Path) -> None:
    (r / "pool" / "model_000000.npz").unlink()


def symlink_out(r: Path) -> None:
    (r / "pool" / "evil.onnx").symlink_to(r.parent / "victim.txt")
    _edit_entry(r / "pool", 0, file="evil.onnx")


def foreign_models(r: Path) -> None:
    _models_dir(r / "dst", {"model_000000.onnx": b"someone's model", "model_000001.onnx": b"another"})


def generated_dst(r: Path) -> None:
    shutil.copytree(r / "pool", r / "dst")


def selection_dst_with_foreign_file(r: Path) -> None:
    data = _manifest(r / "pool")
    data["selected_from"] = "../elsewhere"
    data["models"] = []
    _set_manifest(r / "dst", data)
    _write(r / "dst" / "model_000000.onnx", b"a file no selection listed")


def pool_without_facts(r: Path) -> None:
    _write(r / "bare" / "a.onnx", _model_bytes())
    _set_manifest(r / "bare", {"models": [{"file": "a.onnx"}]})


def zero_byte_db(r: Path) -> None:
    _write(r / "zero" / "campaign.db", b"")


def text_db(r: Path) -> None:
    _write(r / "text" / "campaign.db", "not a database\n" * 10)


def other_sqlite(r: Path) -> None:
    _foreign_sqlite(r / "other" / "campaign.db")


def findings_is_a_file(r: Path) -> None:
    _write(r / "camp" / "findings", "a file where the campaign keeps its findings\n")


def corpus_files_deleted(r: Path) -> None:
    db = CampaignDB(r / "camp" / "campaign.db")
    for i in range(3):
        db.add_corpus(CorpusRow(f"{i:016x}", None, "m.onnx", "[]", 1, 1.0, f"corpus/{i:016x}.py", "add", "[]",
                                "tir"))
    db.close()


def other_pool_campaign(r: Path) -> None:
    shutil.copytree(r / "pool", r / "pool2")


def non_utf8_file(path: str, data: bytes = b"fuzz:\n  jobs: 1 # \xff\xfe\n") -> Setup:
    return lambda r: _write(r / path, data)


def yaml_file(path: str, text: str) -> Setup:
    return lambda r: _write(r / path, text)


LAUGHS = ("[&l0 [" + ", ".join(["lol"] * 9) + "], "
          + ", ".join(f"&l{d} [" + ", ".join([f"*l{d - 1}"] * 9) + "]" for d in range(1, 10)) + "]")
"""A "billion laughs" YAML value: 9**10 strings once its aliases are expanded, 400 bytes written."""


def experiment(text: str) -> Setup:
    return yaml_file("exp.yaml", "name: exp\nheuristics: [basic]\n" + text)


def onnx_file(name: str, data: bytes | Callable[[], bytes]) -> Setup:
    return lambda r: _write(r / name, data() if callable(data) else data)


def truncated() -> bytes:
    data = _model_bytes()
    return data[: len(data) // 2]


def non_utf8_model(r: Path) -> None:
    d = os.fsencode(r / "odd")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, b"bad\xff.onnx"), "wb") as fh:
        fh.write(_model_bytes())


def glob_pool_non_utf8(r: Path) -> None:
    non_utf8_model(r)


def one_corrupt_model_pool(r: Path) -> None:
    shutil.copytree(r / "pool", r / "one")
    _set_manifest(r / "one", {"models": [_manifest(r / "pool")["models"][0]]})
    (r / "one" / "model_000000.onnx").write_bytes(b"x")


def all_corrupt_dir(r: Path) -> None:
    _models_dir(r / "junk", {"a.onnx": b"", "b.onnx": os.urandom(64), "c.onnx": b"\x08\x07"})


def hold_lock(r: Path) -> subprocess.Popen[str]:
    code = textwrap.dedent(f"""
        import time
        from seedzer.store.lock import DirLock
        with DirLock({str(r / 'camp')!r}, what="campaign", command="seedzer fuzz --out camp"):
            print("locked", flush=True)
            time.sleep(120)
        """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path]))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


SIG = "abc123abc123"
"""The signature (folder name) of the finding the triage cases put into ``camp``."""


def finding(kind: str = "lowlevel", sig: str = SIG) -> Setup:
    """A low-level-looking finding in ``camp/findings/<sig>`` (its meta.json names ``kind``)."""
    def run(r: Path) -> None:
        folder = r / "camp" / "findings" / sig
        observation = {"symptom": "exception", "stage": "pass", "pass": "tirx.UnrollLoop", "message": "boom"}
        _write(folder / "meta.json", json.dumps({"signature": sig, "kind": kind, "observation": observation}))
        _write(folder / "ir.py", "x = 1\n")
        _write(folder / "passes.json", "[]\n")
    return run


def read_only_campaign(r: Path) -> Callable[[], None]:
    """``camp`` with a finding, read-only: a read-only bind mount as root (who ignores modes), else modes.

    Returns what undoes it (called when the case ends)."""
    finding()(r)
    camp = r / "camp"
    if os.geteuid() != 0:
        dirs = [camp, *(p for p in camp.rglob("*") if p.is_dir())]
        for d in dirs:
            d.chmod(0o555)

        def writable_again() -> None:
            for d in dirs:
                d.chmod(0o755)
        return writable_again

    def unmount() -> None:
        subprocess.run(["umount", "-l", str(camp)], capture_output=True, check=False)

    if subprocess.run(["mount", "--bind", str(camp), str(camp)], capture_output=True, check=False).returncode == 0:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(camp)], capture_output=True,
                          check=False).returncode == 0:
            return unmount
        unmount()
    pytest.skip("cannot make a read-only directory here (running as root without mount privileges)")


def ledger(path: str, newer: bool = False, roots: tuple[str, ...] = ()) -> Setup:
    """A ledger holding ``roots``; ``newer``: as a newer Seedzer writes it (a higher schema)."""
    def make(r: Path) -> None:
        from seedzer.ledger.records import CAMPAIGN, RootSighting
        from seedzer.ledger.store import SCHEMA_VERSION, Ledger

        with Ledger(r / path) as book:
            book.record([RootSighting(root, "tir", "exception", "tirx.X", "x", str(r / "camp"), "f", 1, 1.0, 2.0)
                         for root in roots], CAMPAIGN)
        if newer:
            conn = sqlite3.connect(r / path)
            conn.execute("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
            conn.commit()
            conn.close()
    return make


def hold_ledger(path: str) -> Setup:
    """Another process holding the ledger at ``path`` in an exclusive transaction."""
    def hold(r: Path) -> subprocess.Popen[str]:
        ledger(path, roots=("aaaa00000001",))(r)
        code = textwrap.dedent(f"""
            import sqlite3, time
            conn = sqlite3.connect({str(r / path)!r}, isolation_level=None)
            conn.execute("BEGIN EXCLUSIVE")
            print("locked", flush=True)
            time.sleep(120)
            """)
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        return proc
    return hold


def wheels(*made: tuple[str, str, dict[str, str]]) -> Setup:
    """Wheels (distribution, version, files) in ``wheels/``, built on disk."""
    def make(r: Path) -> None:
        from tests.unit.environments.fake_wheel import make_wheel

        for dist, version, files in made:
            make_wheel(r / "wheels", dist, version, files)
    return make


OFFLINE = "reproducers:\n  pip_args: [--no-index, --find-links, wheels]\n"
"""pip sees only the wheels of the world (no download)."""
FAKE_TVM = ("apache-tvm", "0.0.1", {"tvm/__init__.py": "__version__ = '0.0.1'\n"})


def both(*setups: Setup) -> Setup:
    def run(r: Path) -> None:
        for s in setups:
            s(r)
    return run


# --- the table -------------------------------------------------------------------------------------

N = r"[^\n]*"  # any text on the line
RANGE = r"is not in the range"

CASES: list[Case] = [
    # ---- generate (every refusal comes before NNSmith is started) ----
    Case("generate-count-0", ["generate", "-H", "basic", "-n", "0", "-o", "dst"], rf"--count: 0 {RANGE} 1<=x<=100000"),
    Case("generate-count-huge", ["generate", "-H", "basic", "-n", "1000000000", "-o", "dst"],
         rf"--count: 1000000000 {RANGE} 1<=x<=100000"),
    Case("generate-count-text", ["generate", "-H", "basic", "-n", "many", "-o", "dst"],
         r"--count: 'many' is not a valid integer range"),
    Case("generate-jobs-0", ["generate", "-H", "basic", "-n", "1", "-o", "dst", "-j", "0"], rf"--jobs: 0 {RANGE}{N}"),
    Case("generate-jobs-huge", ["generate", "-H", "basic", "-n", "1", "-o", "dst", "-j", "99999"],
         rf"--jobs: 99999 {RANGE} 1<=x<=1024"),
    Case("generate-max-nodes-0", ["generate", "-H", "basic", "-n", "1", "-o", "dst", "--max-nodes", "0"],
         rf"--max-nodes: 0 {RANGE} 1<=x<=100"),
    Case("generate-seed-huge", ["generate", "-H", "basic", "-n", "1", "-o", "dst", "-s", str(2**70)],
         rf"--seed: {2**70} {RANGE}{N}"),
    Case("generate-unknown-heuristic", ["generate", "-H", "nope", "-n", "1", "-o", "dst"],
         r"unknown heuristic 'nope' \(known: adaptive, basic, big, conv1, conv3, conv5, edge, reach, small, zoo; "
         r"or pass a path to a \.yaml/\.py file\)"),
    Case("generate-heuristic-file-missing", ["generate", "-H", "missing/h.yaml", "-n", "1", "-o", "dst"],
         r"heuristic file missing/h\.yaml: not found"),
    Case("generate-heuristic-not-utf8", ["generate", "-H", "h.yaml", "-n", "1", "-o", "dst"],
         r"h\.yaml: heuristic file is not UTF-8 text \(byte 0xff at offset 16\)",
         non_utf8_file("h.yaml", b"description: x  \xff\ngeneration: {}\n")),
    Case("generate-heuristic-duplicate-key", ["generate", "-H", "h.yaml", "-n", "1", "-o", "dst"],
         r"h\.yaml: line 3: malformed YAML \(duplicate key 'generation'\)",
         yaml_file("h.yaml", "generation: {}\nselection: {}\ngeneration: {}\n")),
    Case("generate-heuristic-directory", ["generate", "-H", "pool/", "-n", "1", "-o", "dst"],
         r"heuristic file pool/: not found"),
    Case("generate-into-foreign-models", ["generate", "-H", "basic", "-n", "2", "-o", "dst"],
         r"pool dst: holds model_000000\.onnx, model_000001\.onnx but no manifest\.json, so it is not a pool "
         r"seedzer wrote; refusing to write into it \(use a new or empty directory\)", foreign_models),
    Case("generate-into-other-onnx", ["generate", "-H", "basic", "-n", "2", "-o", "dst"],
         rf"pool dst: holds mine\.onnx but no manifest\.json{N}", onnx_file("dst/mine.onnx", b"user data")),
    Case("generate-out-is-file", ["generate", "-H", "basic", "-n", "1", "-o", "notes.txt"],
         r"--out: Directory 'notes\.txt' is a file"),
    Case("generate-into-pool-other-seed", ["generate", "-H", "basic", "-n", "1", "-o", "pool", "-s", "7"],
         r"pool pool was made with different generation settings; re-run with the original options or use "
         r"another directory"),
    Case("generate-into-selection", ["generate", "-H", "basic", "-n", "1", "-o", "sel"],
         r"pool sel holds a selection; generate into another directory",
         lambda r: _set_manifest(r / "sel", {"selected_from": "../pool", "models": []})),
    Case("generate-selecting-into-generated", ["generate", "-H", "small", "-n", "1", "-o", "pool"],
         r"pool pool already holds generated models; heuristic small selects, so generate it into another "
         r"directory"),
    Case("generate-into-escaping-manifest", ["generate", "-H", "basic", "-n", "1", "-o", "pool"],
         rf"pool/manifest\.json: models\[0\]\.file '\.\./victim\.txt' is outside the pool directory{N}",
         escape_manifest("../victim.txt")),
    Case("generate-into-bad-manifest", ["generate", "-H", "basic", "-n", "1", "-o", "pool"],
         r"pool pool: unreadable manifest\.json \(invalid JSON at line 1, column 2: Expecting property name "
         r"enclosed in double quotes\)", yaml_file("pool/manifest.json", "{oops")),
    Case("generate-into-foreign-manifest", ["generate", "-H", "basic", "-n", "1", "-o", "web"],
         r"pool web: manifest\.json has no models list", yaml_file("web/manifest.json", '{"name": "a web app"}')),
    Case("generate-cache-dir-file", ["generate", "-H", "basic", "-n", "1", "-o", "dst", "--cache-dir", "notes.txt"],
         r"--cache-dir: Directory 'notes\.txt' is a file"),
    Case("generate-missing-heuristic", ["generate", "-n", "1", "-o", "dst"], r"--heuristic: missing option"),
    # ---- pool stats ----
    Case("stats-missing-dir", ["pool", "stats", "nowhere"], r"pool nowhere: no such directory"),
    Case("stats-no-manifest", ["pool", "stats", "empty"],
         r"pool empty: no manifest\.json \(not a seed pool, or never generated\)", lambda r: (r / "empty").mkdir()),
    Case("stats-bad-json", ["pool", "stats", "pool"],
         r"pool pool: unreadable manifest\.json \(invalid JSON at line 1, column 12: Expecting value\)",
         yaml_file("pool/manifest.json", '{"models": ]')),
    Case("stats-manifest-not-utf8", ["pool", "stats", "pool"]
         , r"pool pool: unreadable manifest\.json \(not UTF-8 text\)",
         non_utf8_file("pool/manifest.json", b'{"models": ["\xff"]}')),
    Case("stats-dotdot", ["pool", "stats", "pool"],
         r"pool/manifest\.json: models\[0\]\.file '\.\./victim\.txt' is outside the pool directory; refusing to "
         r"use it", escape_manifest("../victim.txt")),
    Case("stats-absolute", ["pool", "stats", "pool"],
         rf"pool/manifest\.json: models\[0\]\.file '/etc/passwd' is outside the pool directory{N}",
         escape_manifest("/etc/passwd")),
    Case("stats-reference-escape", ["pool", "stats", "pool"],
         rf"pool/manifest\.json: models\[0\]\.reference '\.\./\.\./x\.npz' is outside{N}",
         escape_manifest("../../x.npz", "reference")),
    Case("stats-symlink-out", ["pool", "stats", "pool"],
         r"pool/manifest\.json: models\[0\]\.file 'evil\.onnx' leads outside the pool directory \(a symlink\); "
         r"refusing to use it", symlink_out),
    Case("stats-corrupt-model", ["pool", "stats", "pool"],
         r"pool pool: 1 listed file\(s\) missing or corrupt \(model_000001\.onnx: corrupt \(its sha256 differs "
         r"from the manifest's\)\)", corrupt_model),
    Case("stats-missing-model", ["pool", "stats", "pool"],
         r"pool pool: 1 listed file\(s\) missing or corrupt \(model_000002\.onnx: missing\)", missing_model),
    Case("stats-missing-reference", ["pool", "stats", "pool"],
         r"pool pool: 1 listed file\(s\) missing or corrupt \(model_000000\.npz: missing\)", missing_reference),
    Case("stats-models-not-list", ["pool", "stats", "pool"], r"pool pool: manifest\.json has no models list",
         lambda r: _set_manifest(r / "pool", {"models": {"a": 1}})),
    Case("stats-entry-not-dict", ["pool", "stats", "pool"],
         r"pool/manifest\.json: models\[0\] must be a mapping, got str",
         lambda r: _set_manifest(r / "pool", {"models": ["model_000000.onnx"]})),
    Case("stats-entry-no-file", ["pool", "stats", "pool"],
         r"pool/manifest\.json: models\[0\]\.file must be a file name, got None",
         lambda r: _set_manifest(r / "pool", {"models": [{"index": 0}]})),
    Case("stats-duplicate-entry", ["pool", "stats", "pool"],
         r"pool/manifest\.json: models\[1\]\.file 'model_000000\.onnx' is listed twice",
         lambda r: _edit_entry(r / "pool", 1, file="model_000000.onnx")),
    Case("stats-bad-sha", ["pool", "stats", "pool"], r"pool/manifest\.json: models\[0\]\.sha256 is not a sha256 digest",
         lambda r: _edit_entry(r / "pool", 0, sha256="1234")),
    Case("stats-non-utf8-name", ["pool", "stats", "pool"],
         r"pool/manifest\.json: models\[0\]\.file 'a\\xffb\.onnx' is not valid UTF-8 text",
         lambda r: _set_manifest(r / "pool", {"models": [{"file": "a\udcffb.onnx"}]})),
    Case("stats-top-ops-0", ["pool", "stats", "pool", "--top-ops", "0"], rf"--top-ops: 0 {RANGE}{N}"),
    Case("stats-pool-is-file", ["pool", "stats", "notes.txt"], r"pool notes\.txt: no such directory"),
    # ---- pool select ----
    Case("select-same-dir", ["pool", "select", "-H", "small", "pool", "pool"],
         r"pool pool: source and destination are the same directory"),
    Case("select-dotdot-victim", ["pool", "select", "-H", "small", "pool", "dst"],
         rf"pool/manifest\.json: models\[0\]\.file '\.\./victim\.txt' is outside the pool directory{N}",
         escape_manifest("../victim.txt")),
    Case("select-etc-passwd", ["pool", "select", "-H", "small", "pool", "dst"],
         rf"pool/manifest\.json: models\[0\]\.file '\.\./\.\./\.\./etc/passwd' is outside the pool directory{N}",
         escape_manifest("../../../etc/passwd")),
    Case("select-reference-escape", ["pool", "select", "-H", "small", "pool", "dst"],
         rf"pool/manifest\.json: models\[2\]\.reference '\.\./sentinel\.txt' is outside{N}",
         lambda r: _edit_entry(r / "pool", 2, reference="../sentinel.txt")),
    Case("select-symlink-out", ["pool", "select", "-H", "small", "pool", "dst"],
         rf"pool/manifest\.json: models\[0\]\.file 'evil\.onnx' leads outside the pool directory{N}", symlink_out),
    Case("select-into-foreign-models", ["pool", "select", "-H", "small", "pool", "dst"],
         rf"pool dst: holds model_000000\.onnx, model_000001\.onnx but no manifest\.json{N}", foreign_models),
    Case("select-into-generated", ["pool", "select", "-H", "small", "pool", "dst"],
         r"pool dst already holds generated models; select into another directory", generated_dst),
    Case("select-overwrite-unlisted", ["pool", "select", "-H", "small", "pool", "dst"],
         r"pool dst: model_000000\.onnx exists and no earlier selection there lists it; refusing to overwrite it "
         r"\(use a new or empty directory\)", selection_dst_with_foreign_file),
    Case("select-dst-escaping-manifest", ["pool", "select", "-H", "small", "pool", "dst"],
         rf"dst/manifest\.json: models\[0\]\.file '\.\./sentinel\.txt' is outside the pool directory{N}",
         lambda r: _set_manifest(r / "dst", {"selected_from": "x", "models": [{"file": "../sentinel.txt"}]})),
    Case("select-corrupt-source", ["pool", "select", "-H", "small", "pool", "dst"],
         rf"pool pool: 1 listed file\(s\) missing or corrupt \(model_000001\.onnx: corrupt{N}", corrupt_model),
    Case("select-missing-source", ["pool", "select", "-H", "small", "pool", "dst"],
         r"pool pool: 1 listed file\(s\) missing or corrupt \(model_000002\.onnx: missing\)", missing_model),
    Case("select-source-missing", ["pool", "select", "-H", "small", "nowhere", "dst"]
         , r"pool nowhere: no such directory"),
    Case("select-unknown-heuristic", ["pool", "select", "-H", "nope", "pool", "dst"], rf"unknown heuristic 'nope'{N}"),
    Case("select-count-0", ["pool", "select", "-H", "small", "-n", "0", "pool", "dst"], rf"--count: 0 {RANGE}{N}"),
    Case("select-dst-file", ["pool", "select", "-H", "small", "pool", "notes.txt"],
         r"DST: Directory 'notes\.txt' is a file"),
    Case("select-entries-without-facts", ["pool", "select", "-H", "small", "bare", "dst"],
         r"pool bare: manifest\.json entries lack the facts heuristic small selects on \(KeyError: '\w+'\)",
         pool_without_facts),
    Case("select-empty-source", ["pool", "select", "-H", "small", "e", "dst"], r"pool e: the manifest lists no models",
         lambda r: _set_manifest(r / "e", {"models": []})),
    Case("heuristics-extra-arg", ["pool", "heuristics", "extra"],
         r"seedzer pool heuristics: Got unexpected extra argument \(extra\) \(see 'seedzer pool heuristics --help'\)"),
    Case("pool-unknown-verb", ["pool", "bogus"]
         , r"seedzer pool: No such command 'bogus'(\.)? \(see 'seedzer pool --help'\)"),
    # ---- load ----
    Case("load-zero-byte", ["load", "m.onnx"], r"m\.onnx: ONNX model m\.onnx is empty \(0 bytes\)"
         , onnx_file("m.onnx", b"")),
    Case("load-random", ["load", "m.onnx"], rf"m\.onnx: ONNX model m\.onnx is (truncated or corrupt|not valid ONNX){N}",
         onnx_file("m.onnx", bytes(range(256)) * 4)),
    Case("load-truncated", ["load", "m.onnx"]
         , rf"m\.onnx: ONNX model m\.onnx is (truncated or corrupt|not valid ONNX){N}",
         onnx_file("m.onnx", truncated)),
    Case("load-text", ["load", "m.onnx"], rf"m\.onnx: ONNX model m\.onnx is (truncated or corrupt|not valid ONNX){N}",
         onnx_file("m.onnx", b"hello, I am not a model\n")),
    Case("load-missing", ["load", "nope.onnx"], r"nope\.onnx: no such model file"),
    Case("load-fifo", ["load", "fifo.onnx"], r"fifo\.onnx: not a regular file", lambda r: os.mkfifo(r / "fifo.onnx")),
    Case("load-empty-dir", ["load", "empty"], r"pool directory empty holds no \*\.onnx models",
         lambda r: (r / "empty").mkdir()),
    Case("load-all-corrupt-dir", ["load", "junk"],
         rf"junk: none of its 3 models can be loaded \(a\.onnx: ONNX model a\.onnx is empty \(0 bytes\); "
         rf"{N}; and 1 more\)",
         all_corrupt_dir),
    Case("load-pool-corrupt-only", ["load", "one"],
         r"one/model_000000\.onnx: corrupt: its sha256 differs from the one in the pool's manifest\.json",
         one_corrupt_model_pool),
    Case("load-pool-escape", ["load", "pool"],
         rf"pool/manifest\.json: models\[0\]\.file '\.\./victim\.txt' is outside the pool directory{N}",
         escape_manifest("../victim.txt")),
    Case("load-pool-bad-json", ["load", "pool"], rf"pool pool: unreadable manifest\.json{N}",
         yaml_file("pool/manifest.json", "[")),
    Case("load-non-utf8-name", ["load", "odd"], r"odd/bad\\xff\.onnx: the file name is not UTF-8 text; rename the file",
         non_utf8_model),
    Case("load-target-kind", ["load", "pool", "--target", "bogus"],
         r"--target 'bogus': the kind must be 'llvm' \(loaded models are built and run on this machine's CPU\), "
         r"got 'bogus'"),
    Case("load-target-cuda", ["load", "pool", "--target", '{"kind": "cuda"}'],
         rf"--target '{{\"kind\": \"cuda\"}}': the kind must be 'llvm'{N}got 'cuda'"),
    Case("load-target-string-options", ["load", "pool", "--target", "llvm -mcpu=skylake"],
         rf"--target 'llvm -mcpu=skylake': TVM 0\.27 takes target options only in JSON form{N}"),
    Case("load-target-unknown-option", ["load", "pool", "--target", '{"kind": "llvm", "foo": 1}'],
         rf"--target {N}: unknown llvm target option 'foo' \(known: {N}\)"),
    Case("load-target-option-type", ["load", "pool", "--target", '{"kind": "llvm", "opt-level": "x"}'],
         rf"--target {N}: option 'opt-level' must be a JSON int, got 'x'"),
    Case("load-target-opt-level", ["load", "pool", "--target", '{"kind": "llvm", "opt-level": 9}'],
         rf"--target {N}: option 'opt-level' must be between 0 and 3, got 9"),
    Case("load-target-json", ["load", "pool", "--target", '{"kind": llvm'], rf"--target {N}: not valid JSON{N}"),
    Case("load-target-list", ["load", "pool", "--target", '{"kind": "llvm", "mattr": "+avx2"}'],
         rf"--target {N}: option 'mattr' must be a list of strings, got '\+avx2'"),
    Case("load-timeout-nan", ["load", "pool", "--timeout", "nan"], rf"--timeout: must be a number of seconds{N}"),
    Case("load-timeout-inf", ["load", "pool", "--timeout", "inf"], rf"--timeout: inf {RANGE}{N}"),
    Case("load-timeout-0", ["load", "pool", "--timeout", "0"], rf"--timeout: 0(\.0)? {RANGE}{N}"),
    Case("load-jobs-0", ["load", "pool", "--jobs", "0"], rf"--jobs: 0 {RANGE}{N}"),
    Case("load-input-seed-negative", ["load", "pool", "--input-seed", "-1"], rf"--input-seed: -1 {RANGE}{N}"),
    Case("load-out-is-input", ["load", "pool", "--out", "pool"],
         r"--out pool: is where the input models are; write the seeds to a directory of their own"),
    Case("load-out-is-campaign", ["load", "pool", "--out", "camp"]
         , r"--out camp: is a campaign directory; write the seeds elsewhere"),
    Case("load-out-foreign-dir", ["load", "pool", "--out", "stuff"],
         r"--out stuff: exists, is not empty and holds no earlier load \(no load_report\.json\); "
         r"refusing to write into it",
         yaml_file("stuff/mine.txt", "mine")),
    Case("load-out-file", ["load", "pool", "--out", "notes.txt"], r"--out notes\.txt: exists and is not a directory"),
    # ---- config ----
    Case("config-check-missing", ["config", "check", "nope.yaml"],
         r"nope\.yaml: cannot read config file \(No such file or directory\)"),
    Case("config-check-directory", ["config", "check", "pool"], r"pool: cannot read config file \(Is a directory\)"),
    Case("config-check-not-utf8", ["config", "check", "c.yaml"],
         r"c\.yaml: config file is not UTF-8 text \(byte 0xff at offset 18\)", non_utf8_file("c.yaml")),
    Case("config-check-duplicate", ["config", "check", "c.yaml"],
         r"c\.yaml: invalid YAML at line 3, column 3: duplicate key 'jobs'"
         , yaml_file("c.yaml", "fuzz:\n  jobs: 1\n  jobs: 2\n")),
    Case("config-check-duplicate-section", ["config", "check", "c.yaml"],
         r"c\.yaml: invalid YAML at line 3, column 1: duplicate key 'fuzz'",
         yaml_file("c.yaml", "fuzz: {}\noracles: {}\nfuzz: {jobs: 2}\n")),
    Case("config-check-jobs-huge", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'fuzz\.jobs' must be >= 1 and <= 1024 \(got 100000000000000000000000\)",
         yaml_file("c.yaml", "fuzz:\n  jobs: 100000000000000000000000\n")),
    Case("config-check-rtol-negative", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'oracles\.rtol' must be a finite number >= 0 \(got -1\.0\)"
         , yaml_file("c.yaml", "oracles:\n  rtol: -1\n")),
    Case("config-check-atol-nan", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'oracles\.atol' must be a finite number >= 0 \(got nan\)"
         , yaml_file("c.yaml", "oracles:\n  atol: .nan\n")),
    Case("config-check-build-0", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'timeouts\.build' must be a finite number of seconds between 1 and 86400 \(a day\) "
         r"\(got 0\.0\)",
         yaml_file("c.yaml", "timeouts:\n  build: 0\n")),
    Case("config-check-run-negative", ["config", "check", "c.yaml"],
         rf"c\.yaml: field 'timeouts\.run' must be a finite number of seconds{N}\(got -5\.0\)",
         yaml_file("c.yaml", "timeouts:\n  run: -5\n")),
    Case("config-check-timeout-1e300", ["config", "check", "c.yaml"],
         rf"c\.yaml: field 'timeouts\.load' must be a finite number of seconds{N}\(got 1e\+300\)",
         yaml_file("c.yaml", "timeouts:\n  load: 1.0e+300\n")),
    Case("config-check-timeout-bigint", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'timeouts\.load' must be a finite number \(got 10{30,}\.\.\.0{30,}\)",
         yaml_file("c.yaml", "timeouts:\n  load: 1" + "0" * 400 + "\n")),
    Case("config-check-billion-laughs", ["config", "check", "c.yaml"],
         r"c\.yaml: invalid YAML at line 2, column \d+: aliases expand this value to more than 1000000 values",
         yaml_file("c.yaml", f"fuzz:\n  jobs: {LAUGHS}\n")),
    Case("fuzz-config-billion-laughs", ["fuzz", "--pool", "pool", "--out", "camp", "--config", "c.yaml"],
         r"c\.yaml: invalid YAML at line 2, column \d+: aliases expand this value to more than 1000000 values",
         yaml_file("c.yaml", f"fuzz:\n  jobs: {LAUGHS}\n")),
    Case("experiment-billion-laughs", ["experiment", "check", "exp.yaml"],
         r"exp\.yaml: invalid YAML at line 3, column \d+: aliases expand this value to more than 1000000 values",
         experiment(f"trials: {LAUGHS}\n")),
    Case("config-check-minutes-inf", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'fuzz\.minutes' must be > 0 and <= 527040 \(a year\), a finite number \(got inf\)",
         yaml_file("c.yaml", "fuzz:\n  minutes: .inf\n")),
    Case("config-check-minutes-nan", ["config", "check", "c.yaml"],
         rf"c\.yaml: field 'fuzz\.minutes' must be > 0{N}\(got nan\)", yaml_file("c.yaml", "fuzz:\n  minutes: .nan\n")),
    Case("config-check-heuristic", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'generate\.heuristic' must name a shipped heuristic \(see `seedzer pool heuristics`\) or an "
         r"existing \.yaml/\.py heuristic file \(got 'telepathy'\)"
         , yaml_file("c.yaml", "generate:\n  heuristic: telepathy\n")),
    Case("config-check-oracle", ["config", "check", "c.yaml"],
         rf"c\.yaml: field 'oracles\.enabled' entries must be among {N}\(got \['telepathy'\]\)",
         yaml_file("c.yaml", "oracles:\n  enabled: [telepathy]\n")),
    Case("config-check-unknown-field", ["config", "check", "c.yaml"],
         r"c\.yaml: unknown field 'fuzz\.jobz' \(did you mean 'jobs'\?\)", yaml_file("c.yaml", "fuzz:\n  jobz: 2\n")),
    Case("config-check-dev-zero", ["config", "check", "/dev/zero"],
         r"/dev/zero: config file is larger than 1 MiB \(not a config file\?\)"),
    Case("config-check-list", ["config", "check", "c.yaml"], r"c\.yaml: top level must be a mapping, got list",
         yaml_file("c.yaml", "- a\n- b\n")),
    Case("config-check-perf-factor", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'oracles\.perf_factor' must be a finite number > 1 and <= 1000 \(got 1\.0\)",
         yaml_file("c.yaml", "oracles:\n  perf_factor: 1\n")),
    Case("config-check-snapshot-0", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'fuzz\.snapshot_period' must be between 0\.5 and 10 seconds \(got 0\.0\)",
         yaml_file("c.yaml", "fuzz:\n  snapshot_period: 0\n")),
    Case("config-check-seed-huge", ["config", "check", "c.yaml"],
         rf"c\.yaml: field 'fuzz\.seed' must be an integer between {N} \(got {2**70}\)",
         yaml_file("c.yaml", f"fuzz:\n  seed: {2**70}\n")),
    Case("config-check-count-0", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'generate\.count' must be >= 1 and <= 100000 \(got 0\)"
         , yaml_file("c.yaml", "generate:\n  count: 0\n")),
    Case("config-check-regex", ["config", "check", "c.yaml"],
         r"c\.yaml: field 'known_issues\[0\]\.pattern' must be a valid regular expression \(got 'a\('\)",
         yaml_file("c.yaml", "known_issues:\n  - pattern: 'a('\n")),
    Case("config-check-syntax", ["config", "check", "c.yaml"], rf"c\.yaml: invalid YAML at line 3, column 1:{N}",
         yaml_file("c.yaml", "fuzz:\n  jobs: [\n")),
    Case("config-check-bad-timestamp", ["config", "check", "c.yaml"], rf"c\.yaml: (invalid YAML|field){N}",
         yaml_file("c.yaml", "generate:\n  heuristic: 2024-13-45\n")),
    Case("config-check-no-arg", ["config", "check"], r"PATH: missing argument"),
    Case("config-show-extra", ["config", "show", "x"],
         r"seedzer config show: Got unexpected extra argument \(x\) \(see 'seedzer config show --help'\)"),
    # ---- coverage ----
    Case("coverage-export-missing", ["coverage", "export", "nowhere"]
         , r"nowhere: no such file, directory or matching path"),
    Case("coverage-export-zero-db", ["coverage", "export", "zero"],
         r"zero/campaign\.db: empty file \(0 bytes\), not a Seedzer campaign database", zero_byte_db),
    Case("coverage-export-text-db", ["coverage", "export", "text"],
         r"text/campaign\.db: not an SQLite database, so not a Seedzer campaign database", text_db),
    Case("coverage-export-other-sqlite", ["coverage", "export", "other"],
         r"other/campaign\.db: an SQLite database but not a Seedzer campaign \(no meta table with a schema_version\)",
         other_sqlite),
    Case("coverage-export-out-campaign-db", ["coverage", "export", "camp", "-o", "camp/campaign.db"],
         r"-o camp/campaign\.db: refusing to write a coverage set named campaign\.db \(a campaign's database\)"),
    Case("coverage-export-out-sqlite", ["coverage", "export", "camp", "-o", "other/data.sqlite"],
         r"-o other/data\.sqlite: is an SQLite database; refusing to overwrite it",
         lambda r: _foreign_sqlite(r / "other" / "data.sqlite")),
    Case("coverage-export-out-is-input", ["coverage", "export", "good.cov", "-o", "good.cov"],
         r"-o good\.cov: is also an input \(good\.cov\); write the result to another file"),
    Case("coverage-export-out-user-file", ["coverage", "export", "camp", "-o", "notes.txt"],
         r"-o notes\.txt: exists and is not a coverage set; refusing to overwrite it "
         r"\(remove it or choose another name\)"),
    Case("coverage-export-out-dir", ["coverage", "export", "camp", "-o", "pool"]
         , r"-o pool: is a directory; name a file to write"),
    Case("coverage-export-backend", ["coverage", "export", "camp", "--backend", "bogus"],
         rf"--backend: 'bogus' is not one of {N}"),
    Case("coverage-export-not-a-set", ["coverage", "export", "notes.txt"],
         r"notes\.txt: not a coverage set \(first line is not '# seedzer-coverage-set'\)"),
    Case("coverage-export-not-utf8-set", ["coverage", "export", "x.cov"], rf"x\.cov: cannot read{N}",
         non_utf8_file("x.cov", b"# seedzer-coverage-set\n\xff\n")),
    Case("coverage-export-glob-none", ["coverage", "export", "nothing-*"]
         , r"nothing-\*: no such file, directory or matching path"),
    Case("coverage-union-out-campaign-db", ["coverage", "union", "camp", "-o", "camp/campaign.db"],
         rf"-o camp/campaign\.db: refusing to write a coverage set named campaign\.db{N}"),
    Case("coverage-union-out-input", ["coverage", "union", "camp", "good.cov", "-o", "good.cov"],
         r"-o good\.cov: is also an input \(good\.cov\); write the result to another file"),
    Case("coverage-union-no-sources", ["coverage", "union", "-o", "u.cov"], r"SOURCES: missing argument"),
    Case("coverage-union-no-out", ["coverage", "union", "camp"], r"--out: missing option"),
    Case("coverage-union-bad-source", ["coverage", "union", "camp", "zero", "-o", "u.cov"],
         r"zero/campaign\.db: empty file \(0 bytes\), not a Seedzer campaign database", zero_byte_db),
    Case("coverage-diff-same-outputs",
         ["coverage", "diff", "camp", "good.cov", "--only-a", "d.cov", "--only-b", "d.cov"],
         r"--only-a d\.cov: is also --only-b; the two differences need two files"),
    Case("coverage-diff-out-db", ["coverage", "diff", "camp", "good.cov", "--only-a", "camp/campaign.db"],
         rf"--only-a camp/campaign\.db: refusing to write a coverage set named campaign\.db{N}"),
    Case("coverage-diff-out-input", ["coverage", "diff", "camp", "good.cov", "--only-b", "good.cov"],
         r"--only-b good\.cov: is also an input \(good\.cov\); write the result to another file"),
    Case("coverage-diff-missing-b", ["coverage", "diff", "camp", "nowhere"]
         , r"nowhere: no such file, directory or matching path"),
    Case("coverage-diff-other-sqlite", ["coverage", "diff", "camp", "other"],
         rf"other/campaign\.db: an SQLite database but not a Seedzer campaign{N}", other_sqlite),
    Case("coverage-selftest-rounds-0", ["coverage", "selftest", "--rounds", "0"], rf"--rounds: 0 {RANGE}{N}"),
    Case("coverage-selftest-granularity", ["coverage", "selftest", "--granularity", "lines"],
         rf"--granularity: 'lines' is not one of {N}"),
    Case("coverage-selftest-cache-file", ["coverage", "selftest", "--cache", "notes.txt"],
         r"--cache: Directory 'notes\.txt' is a file"),
    Case("coverage-unknown-verb", ["coverage", "intersect"], rf"seedzer coverage: No such command 'intersect'{N}"),
    Case("coverage-union-null-feature", ["coverage", "union", "camp", "bad.json", "-o", "u.cov"],
         r"bad\.json: features\[1\] is not a coverage feature \(a non-empty one-line string\), got null",
         yaml_file("bad.json", '{"format": "seedzer-coverage-set", "features": ["seq/Simplify:=", null]}')),
    Case("coverage-union-mapping-feature", ["coverage", "union", "bad.json", "-o", "u.cov"],
         r"bad\.json: features\[0\] is not a coverage feature \(a non-empty one-line string\), "
         r"got \{\"a\": 2\}",
         yaml_file("bad.json", '{"format": "seedzer-coverage-set", "features": [{"a": 2}]}')),
    Case("coverage-export-number-feature", ["coverage", "export", "bad.json"],
         rf"bad\.json: features\[0\] is not a coverage feature{N}got 7",
         yaml_file("bad.json", '{"format": "seedzer-coverage-set", "features": [7]}')),
    # ---- triage / replay (every refusal comes before a finding is touched) ----
    Case("triage-python-missing", ["triage", "camp", "--python", "/nope/python"],
         r"--python /nope/python: cannot run the interpreter \(No such file or directory\)", finding()),
    Case("triage-python-not-python", ["triage", "camp", "--python", "/bin/false"],
         r"--python /bin/false: not a working Python 3 interpreter \(exit status 1\)", finding()),
    Case("replay-python-missing", ["replay", "camp", "--python", "/nope/python"],
         r"--python /nope/python: cannot run the interpreter \(No such file or directory\)", finding()),
    Case("triage-minutes-nan", ["triage", "camp", "--minutes", "nan"],
         r"--minutes: must be a finite number > 0 and <= 527040 minutes \(a year\) \(got nan\)", finding()),
    Case("triage-minutes-inf", ["triage", "camp", "--minutes", "inf"], rf"--minutes: must be a finite{N}\(got inf\)",
         finding()),
    Case("triage-minutes-0", ["triage", "camp", "--minutes", "0"], rf"--minutes: must be a finite{N}\(got 0\)",
         finding()),
    Case("triage-unknown-kind", ["triage", "camp"],
         rf"camp/findings/{SIG}: no finding kind 'telepathy' \(known: graph, load, sched, tir\)", finding("telepathy")),
    Case("triage-read-only-campaign", ["triage", "camp"],
         rf"camp/findings/{SIG}: cannot write there \((read-only file system|permission denied)\); triage writes "
         r"the reduction, reduced/repro\.py and report\.md into every finding folder", read_only_campaign),
    # ---- report ----
    Case("report-missing", ["report", "nowhere"], r"nowhere: results directory does not exist"),
    Case("report-empty", ["report", "empty"],
         r"empty: no campaigns found \(no campaign\.db below it, e\.g\. <heuristic>/trial-<n>/\)"
         , lambda r: (r / "empty").mkdir()),
    Case("report-watch-nan", ["report", "results", "--watch", "nan"],
         r"--watch: must be a positive number of seconds, at most 86400 \(got nan\)"),
    Case("report-watch-inf", ["report", "results", "--watch", "inf"],
         r"--watch: must be a positive number of seconds, at most 86400 \(got inf\)"),
    Case("report-watch-negative", ["report", "results", "--watch", "-1"],
         r"--watch: must be a positive number of seconds, at most 86400 \(got -1\)"),
    Case("report-out-is-results", ["report", "results", "--out", "results"],
         r"--out results: is the results directory; write the report to a directory of its own"),
    Case("report-out-is-campaign", ["report", "results", "--out", "camp"],
         r"--out camp: is a campaign directory; write the report elsewhere"),
    Case("report-out-is-pool", ["report", "results", "--out", "pool"]
         , r"--out pool: is a seed pool; write the report elsewhere"),
    Case("report-out-is-file", ["report", "results", "--out", "notes.txt"]
         , r"--out notes\.txt: exists and is not a directory"),
    Case("report-out-foreign", ["report", "results", "--out", "stuff"],
         r"--out stuff: exists, is not empty and holds no earlier report \(no report\.html\); "
         r"refusing to write into it",
         yaml_file("stuff/data.csv", "precious,data\n")),
    # ---- status ----
    Case("status-missing", ["status", "nowhere"], r"nowhere: not a campaign directory \(no campaign\.db\)"),
    Case("status-no-db", ["status", "pool"], r"pool: not a campaign directory \(no campaign\.db\)"),
    Case("status-zero-db", ["status", "zero"]
         , r"zero/campaign\.db: empty file \(0 bytes\), not a Seedzer campaign database",
         zero_byte_db),
    Case("status-text-db", ["status", "text"]
         , r"text/campaign\.db: not an SQLite database, so not a Seedzer campaign database",
         text_db),
    Case("status-other-sqlite", ["status", "other"],
         r"other/campaign\.db: an SQLite database but not a Seedzer campaign \(no meta table with a schema_version\)",
         other_sqlite),
    Case("status-db-is-dir", ["status", "d"], r"d/campaign\.db: not a regular file, so not a campaign database",
         lambda r: (r / "d" / "campaign.db").mkdir(parents=True)),
    Case("status-extra-arg", ["status", "camp", "more"],
         r"seedzer status: Got unexpected extra argument \(more\) \(see 'seedzer status --help'\)"),
    # ---- experiment ----
    Case("experiment-check-missing", ["experiment", "check", "nope.yaml"],
         r"nope\.yaml: cannot read experiment file \(No such file or directory\)"),
    Case("experiment-check-not-utf8", ["experiment", "check", "exp.yaml"],
         r"exp\.yaml: experiment file is not UTF-8 text \(byte 0xfe at offset 11\)",
         non_utf8_file("exp.yaml", b"name: exp\n#\xfe\n")),
    Case("experiment-check-duplicate", ["experiment", "check", "exp.yaml"],
         r"exp\.yaml: invalid YAML at line 4, column 1: duplicate key 'trials'", experiment("trials: 1\ntrials: 2\n")),
    Case("experiment-check-minutes-nan", ["experiment", "check", "exp.yaml"],
         rf"exp\.yaml: field 'minutes' must be > 0{N}\(got nan\)", experiment("minutes: .nan\n")),
    Case("experiment-check-minutes-inf", ["experiment", "check", "exp.yaml"],
         rf"exp\.yaml: field 'minutes' must be > 0{N}\(got inf\)", experiment("minutes: .inf\n")),
    Case("experiment-check-trials-huge", ["experiment", "check", "exp.yaml"],
         r"exp\.yaml: field 'trials' must be at most 1000 \(got 1000000\)", experiment("trials: 1000000\n")),
    Case("experiment-check-jobs-huge", ["experiment", "check", "exp.yaml"],
         r"exp\.yaml: field 'jobs' must be >= 1 and <= 1024 \(got 5000\)", experiment("jobs: 5000\n")),
    Case("experiment-check-parallel", ["experiment", "check", "exp.yaml"],
         r"exp\.yaml: field 'parallel' must be >= 0 \(got -1\)", experiment("parallel: -1\n")),
    Case("experiment-check-unknown-heuristic", ["experiment", "check", "exp.yaml"],
         rf"exp\.yaml: field 'heuristics\[0\]': unknown heuristic 'telepathy'{N}",
         yaml_file("exp.yaml", "name: exp\nheuristics: [telepathy]\npool: {dir: nopools}\n")),
    Case("experiment-check-campaign-timeout", ["experiment", "check", "exp.yaml"],
         rf"exp\.yaml: campaign: field 'timeouts\.build' must be a finite number of seconds{N}\(got 0\.0\)",
         experiment("campaign:\n  timeouts:\n    build: 0\n")),
    Case("experiment-check-empty", ["experiment", "check", "exp.yaml"],
         r"exp\.yaml: empty experiment file \(needs at least 'name' and 'heuristics'\)", yaml_file("exp.yaml", "")),
    Case("experiment-check-name", ["experiment", "check", "exp.yaml"],
         rf"exp\.yaml: field 'name' must be a non-empty name{N}"
         , yaml_file("exp.yaml", "name: ../x\nheuristics: [basic]\n")),
    Case("experiment-check-seed", ["experiment", "check", "exp.yaml"],
         rf"exp\.yaml: field 'seed' must be an integer between{N}", experiment(f"seed: {2**63 - 1}\n")),
    Case("experiment-run-parallel-0", ["experiment", "run", "exp.yaml", "--parallel", "0"],
         r"--parallel: must be between 1 and 1024 \(got 0\)", experiment("")),
    Case("experiment-run-parallel-huge", ["experiment", "run", "exp.yaml", "--parallel", "100000"],
         r"--parallel: must be between 1 and 1024 \(got 100000\)", experiment("")),
    Case("experiment-run-bad-file", ["experiment", "run", "exp.yaml", "--results", "res"],
         r"exp\.yaml: field 'minutes' must be > 0 and <= 527040 \(a year\), a finite number \(got -1\.0\)",
         experiment("minutes: -1\n")),
    # ---- fuzz / run: everything detectable before a campaign starts ----
    Case("fuzz-pool-is-out", ["fuzz", "--pool", "pool", "--out", "pool"],
         r"--out pool: is the seed pool \(--pool pool\); a campaign needs a directory of its own"),
    Case("fuzz-out-inside-pool", ["fuzz", "--pool", "pool", "--out", "pool/campaign"],
         r"--out pool/campaign: is inside the seed pool pool; a campaign needs a directory of its own"),
    Case("fuzz-out-same-via-dot", ["fuzz", "--pool", "pool", "--out", "./pool/."],
         r"--out pool: is the seed pool \(--pool pool\); a campaign needs a directory of its own"),
    Case("fuzz-out-holds-pool", ["fuzz", "--pool", "pool", "--out", "sel"],
         r"--out sel: holds a seed pool \(manifest\.json\); a campaign needs a directory of its own",
         lambda r: _set_manifest(r / "sel", {"selected_from": "../pool", "models": []})),
    Case("fuzz-out-is-file", ["fuzz", "--pool", "pool", "--out", "notes.txt"]
         , r"--out notes\.txt: exists and is not a directory"),
    Case("fuzz-epochs-out-of-range", ["fuzz", "--pool", "pool", "--out", "c", "--epochs", "10"],
         r"--epochs: must be between 0 \(none\) and 9 \(got 10\)"),
    Case("fuzz-epochs-pool-not-generated", ["fuzz", "--pool", "nogen", "--out", "c", "--epochs", "3"],
         r"nogen: --epochs needs a pool made by `seedzer generate` \(its manifest\.json names no generation "
         r"options\)",
         lambda r: (_write(r / "nogen" / "a.onnx", _model_bytes()), _set_manifest(r / "nogen", {"models": [
             {"file": "a.onnx"}]}))),
    Case("fuzz-minutes-nan", ["fuzz", "--pool", "pool", "--out", "c", "--minutes", "nan"],
         r"--minutes: must be a finite number > 0 and <= 527040 minutes \(a year\) \(got nan\)"),
    Case("fuzz-minutes-inf", ["fuzz", "--pool", "pool", "--out", "c", "--minutes", "inf"],
         r"--minutes: must be a finite number > 0 and <= 527040 minutes \(a year\) \(got inf\)"),
    Case("fuzz-minutes-0", ["fuzz", "--pool", "pool", "--out", "c", "--minutes", "0"]
         , rf"--minutes: must be a finite{N}\(got 0\)"),
    Case("fuzz-minutes-negative", ["fuzz", "--pool", "pool", "--out", "c", "--minutes", "-3"]
         , rf"--minutes: {N}\(got -3\)"),
    Case("fuzz-minutes-1e300", ["fuzz", "--pool", "pool", "--out", "c", "--minutes", "1e300"]
         , rf"--minutes: {N}\(got 1e300\)"),
    Case("fuzz-minutes-text", ["fuzz", "--pool", "pool", "--out", "c", "--minutes", "ten"]
         , r"--minutes: 'ten' is not a number"),
    Case("fuzz-jobs-0", ["fuzz", "--pool", "pool", "--out", "c", "--jobs", "0"], rf"--jobs: 0 {RANGE} 1<=x<=1024"),
    Case("fuzz-jobs-huge", ["fuzz", "--pool", "pool", "--out", "c", "--jobs", str(10**23)]
         , rf"--jobs: {10**23} {RANGE}{N}"),
    Case("fuzz-seed-huge", ["fuzz", "--pool", "pool", "--out", "c", "--seed", str(2**64)]
         , rf"--seed: {2**64} {RANGE}{N}"),
    Case("fuzz-config-missing", ["fuzz", "--pool", "pool", "--out", "c", "--config", "nope.yaml"],
         r"nope\.yaml: cannot read config file \(No such file or directory\)"),
    Case("fuzz-config-not-utf8", ["fuzz", "--pool", "pool", "--out", "c", "--config", "c.yaml"],
         rf"c\.yaml: config file is not UTF-8 text{N}", non_utf8_file("c.yaml")),
    Case("fuzz-config-duplicate", ["fuzz", "--pool", "pool", "--out", "c", "--config", "c.yaml"],
         rf"c\.yaml: invalid YAML{N}duplicate key 'minutes'"
         , yaml_file("c.yaml", "fuzz:\n  minutes: 1\n  minutes: 2\n")),
    Case("fuzz-config-timeout-0", ["fuzz", "--pool", "pool", "--out", "c", "--config", "c.yaml"],
         rf"c\.yaml: field 'timeouts\.build' must be a finite number of seconds{N}"
         , yaml_file("c.yaml", "timeouts:\n  build: 0\n")),
    Case("fuzz-config-minutes-nan", ["fuzz", "--pool", "pool", "--out", "c", "--config", "c.yaml"],
         rf"c\.yaml: field 'fuzz\.minutes' must be > 0{N}", yaml_file("c.yaml", "fuzz:\n  minutes: .nan\n")),
    Case("fuzz-resume-other-pool", ["fuzz", "--pool", "pool2", "--out", "camp", "--resume"],
         rf"--resume: campaign camp fuzzes the pool {N}/root/pool, not {N}/root/pool2; "
         rf"resume it with --pool {N}/root/pool",
         other_pool_campaign),
    Case("fuzz-resume-findings-file", ["fuzz", "--pool", "pool", "--out", "camp", "--resume"],
         r"camp/findings: exists and is not a directory \(the campaign keeps its findings there\); move it away",
         findings_is_a_file),
    Case("fuzz-resume-corpus-deleted", ["fuzz", "--pool", "pool", "--out", "camp", "--resume"],
         r"camp/corpus: none of the 3 corpus entries campaign\.db records has its file \(deleted\?\); this "
         r"campaign cannot be resumed, start a new one", corpus_files_deleted),
    Case("fuzz-resume-zero-db", ["fuzz", "--pool", "pool", "--out", "zero", "--resume"],
         r"zero/campaign\.db: empty file \(0 bytes\), not a Seedzer campaign database", zero_byte_db),
    Case("fuzz-resume-text-db", ["fuzz", "--pool", "pool", "--out", "text", "--resume"],
         r"text/campaign\.db: not an SQLite database, so not a Seedzer campaign database", text_db),
    Case("fuzz-resume-other-sqlite", ["fuzz", "--pool", "pool", "--out", "other", "--resume"],
         rf"other/campaign\.db: an SQLite database but not a Seedzer campaign{N}", other_sqlite),
    Case("fuzz-resume-nothing", ["fuzz", "--pool", "pool", "--out", "new", "--resume"]
         , r"new: nothing to resume \(no campaign\.db\)"),
    Case("fuzz-resume-pool-dir", ["fuzz", "--pool", "pool", "--out", "results", "--resume"],
         r"results: nothing to resume \(no campaign\.db\)"),
    Case("fuzz-fresh-over-campaign", ["fuzz", "--pool", "pool", "--out", "camp"],
         r"camp: a campaign already exists here \(use --resume to continue it\)"),
    Case("fuzz-fresh-over-other-sqlite", ["fuzz", "--pool", "pool", "--out", "other"],
         rf"other/campaign\.db: an SQLite database but not a Seedzer campaign{N}", other_sqlite),
    Case("fuzz-fresh-over-zero-db", ["fuzz", "--pool", "pool", "--out", "zero"],
         r"zero/campaign\.db: empty file \(0 bytes\), not a Seedzer campaign database", zero_byte_db),
    Case("fuzz-pool-missing", ["fuzz", "--pool", "nowhere", "--out", "c"]
         , r"nowhere: seed pool directory does not exist"),
    Case("fuzz-pool-is-file", ["fuzz", "--pool", "notes.txt", "--out", "c"],
         r"notes\.txt: not a directory \(a seed pool is a directory of models\)"),
    Case("fuzz-pool-empty", ["fuzz", "--pool", "empty", "--out", "c"],
         r"empty: seed pool has no models \(no manifest\.json entries and no \*\.onnx files\)"
         , lambda r: (r / "empty").mkdir()),
    Case("fuzz-pool-corrupt", ["fuzz", "--pool", "pool", "--out", "c"],
         rf"pool pool: 1 listed file\(s\) missing or corrupt \(model_000001\.onnx: corrupt{N}", corrupt_model),
    Case("fuzz-pool-missing-model", ["fuzz", "--pool", "pool", "--out", "c"],
         r"pool pool: 1 listed file\(s\) missing or corrupt \(model_000002\.onnx: missing\)", missing_model),
    Case("fuzz-pool-bad-manifest", ["fuzz", "--pool", "pool", "--out", "c"]
         , rf"pool pool: unreadable manifest\.json{N}",
         yaml_file("pool/manifest.json", "{")),
    Case("fuzz-pool-foreign-manifest", ["fuzz", "--pool", "pool", "--out", "c"]
         , r"pool pool: manifest\.json has no models list",
         yaml_file("pool/manifest.json", "{}")),
    Case("fuzz-pool-escape", ["fuzz", "--pool", "pool", "--out", "c"],
         rf"pool/manifest\.json: models\[0\]\.file '\.\./victim\.txt' is outside the pool directory{N}",
         escape_manifest("../victim.txt")),
    Case("fuzz-pool-non-utf8", ["fuzz", "--pool", "odd", "--out", "c"],
         r"odd/bad\\xff\.onnx: the file name is not UTF-8 text; rename the file", glob_pool_non_utf8),
    Case("fuzz-monitor-bogus", ["fuzz", "--pool", "pool", "--out", "c", "--monitor", "loud"],
         rf"--monitor: 'loud' is not one of {N}"),
    Case("fuzz-missing-out", ["fuzz", "--pool", "pool"], r"--out: missing option"),
    Case("fuzz-unknown-option", ["fuzz", "--pool", "pool", "--out", "c", "--minuets", "3"],
         r"--minuets: no such option for 'seedzer fuzz' \(did you mean --minutes\?\)"),
    Case("fuzz-locked", ["fuzz", "--pool", "pool", "--out", "camp", "--resume"],
         r"campaign camp is in use by seedzer process \d+ \('seedzer fuzz --out camp', since [0-9T:-]+\); wait for it "
         r"to end or stop it", hold_lock),
    Case("run-minutes-nan", ["run", "--minutes", "nan"], rf"--minutes: must be a finite number{N}\(got nan\)"),
    Case("run-count-0", ["run", "--count", "0"], rf"--count: 0 {RANGE}{N}"),
    Case("run-jobs-0", ["run", "--jobs", "0"], rf"--jobs: 0 {RANGE}{N}"),
    Case("run-config-heuristic", ["run", "--config", "c.yaml"],
         rf"c\.yaml: field 'generate\.heuristic' must name a shipped heuristic{N}",
         yaml_file("c.yaml", "generate:\n  heuristic: telepathy\n")),
    Case("run-out-is-pool", ["run", "--out", "seedpools/basic", "--config", "c.yaml"],
         r"--out seedpools/basic: is the seed pool \(--pool seedpools/basic\); a campaign needs a directory of its own",
         yaml_file("c.yaml", "generate:\n  count: 1\n")),
    # ---- the ledger and the versions a bug affects ----
    Case("bugs-no-ledger", ["bugs", "--ledger", "nope.db"],
         r"nope\.db: no ledger there \(a campaign makes it; see ledger\.path\)"),
    Case("bugs-newer-ledger", ["bugs", "--ledger", "ledger.db"],
         r"ledger\.db: written by a newer Seedzer \(ledger schema \d+; this one reads up to \d+\); upgrade "
         r"Seedzer, the ledger was left untouched", ledger("ledger.db", newer=True, roots=("aaaa00000001",))),
    Case("bugs-add-newer-ledger", ["bugs", "--ledger", "ledger.db", "add", "camp"],
         r"ledger\.db: written by a newer Seedzer \(ledger schema \d+; this one reads up to \d+\); upgrade "
         r"Seedzer, the ledger was left untouched", ledger("ledger.db", newer=True, roots=("aaaa00000001",))),
    Case("bugs-add-locked-ledger", ["bugs", "--ledger", "ledger.db", "add", "camp"],
         r"ledger\.db: locked by another process; [a-z ]+ gave up, the ledger is unchanged \(try again when that "
         r"process is done\)", hold_ledger("ledger.db")),
    Case("bugs-foreign-ledger", ["bugs", "--ledger", "other.db", "add", "camp"],
         r"other\.db: not a Seedzer ledger \(it holds the tables notes\)", lambda r: _foreign_sqlite(r / "other.db")),
    Case("bugs-mark-unknown-root", ["bugs", "--ledger", "ledger.db", "mark", "zzz", "fixed"],
         r"ledger\.db: no root match 'zzz'", ledger("ledger.db", roots=("aaaa00000001",))),
    Case("bugs-mark-reported-without-link", ["bugs", "--ledger", "ledger.db", "mark", "aaaa", "reported"],
         r"reported: give the report's --link", ledger("ledger.db", roots=("aaaa00000001",))),
    Case("versions-wheel-not-tvm", ["versions", "camp", "--version", "wheels/other_pkg-1.0-py3-none-any.whl"],
         r"wheels/other_pkg-1\.0-py3-none-any\.whl: not a TVM wheel \(it holds other_pkg, not the tvm package\)",
         wheels(("other-pkg", "1.0", {"other_pkg/__init__.py": ""}))),
    Case("versions-no-such-release", ["versions", "camp", "--only-given", "--version", "9.9.9", "--config", "c.yaml"],
         r"--version 9\.9\.9: apache-tvm has no such release on the package index \(it has: 0\.0\.1\)",
         both(wheels(FAKE_TVM), yaml_file("c.yaml", OFFLINE))),
    Case("versions-untriaged", ["versions", "camp", "--only-given", "--version", "0.0.1", "--config", "c.yaml"],
         r"camp: neither a finding folder nor a campaign with findings",
         both(wheels(FAKE_TVM), yaml_file("c.yaml", OFFLINE))),
    # ---- the top level ----
    Case("unknown-verb", ["fuz"], r"seedzer: No such command 'fuz'(\.)? \(see 'seedzer --help'\)"),
    Case("unknown-global-option", ["--verbose", "status", "camp"],
         r"--verbose: no such option for 'seedzer' \(did you mean --version\?\)"),
]

RESULTS: dict[str, dict[str, bool]] = {}


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(main, args, prog_name="seedzer", catch_exceptions=True)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = tmp_path / "world"
    shutil.copytree(template, top, symlinks=True)
    root = top / "root"
    for camp in (root / "camp", root / "results" / "basic" / "trial-1"):  # the copy's own pool
        db = CampaignDB(camp / "campaign.db")
        db.set_meta("pool", str((root / "pool").resolve()))
        db.close()
    handle = case.setup(root) if case.setup else None
    monkeypatch.chdir(root)
    try:
        before = tree_digest(top)
        res = _run(case.args)
        after = tree_digest(top)
    finally:
        if isinstance(handle, subprocess.Popen):
            handle.kill()
            handle.wait()
        elif callable(handle):  # undoes what the set-up did outside the tree (a mount, modes)
            handle()
    stderr = res.stderr
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    traceback = "Traceback" in res.output or (res.exception is not None and not isinstance(res.exception, SystemExit))
    one_line = (res.exit_code == case.code and len(lines) == 1
                and re.fullmatch(f"error: {case.error}", lines[0]) is not None)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    RESULTS[case.id] = {"one_line": one_line, "traceback": traceback, "silent": res.exit_code == 0,
                        "changed": bool(changed)}
    assert not traceback, res.output
    assert res.exit_code == case.code, res.output
    assert len(lines) == 1, res.output
    assert re.fullmatch(f"error: {case.error}", lines[0]), lines[0]
    assert not changed, f"the command changed {changed}"


def test_table_summary() -> None:
    """The tally the issue asked for (needs the whole table to have run first, as in a full run)."""
    if len(RESULTS) < len(CASES):
        pytest.skip("run the whole table to get its tally")
    tally = {
        "bad inputs": len(RESULTS),
        "one-line errors": sum(r["one_line"] for r in RESULTS.values()),
        "tracebacks": sum(r["traceback"] for r in RESULTS.values()),
        "silent acceptances": sum(r["silent"] for r in RESULTS.values()),
        "changed trees": sum(r["changed"] for r in RESULTS.values()),
    }
    print("\nbad-input table: " + ", ".join(f"{k} {v}" for k, v in tally.items()))
    assert tally["tracebacks"] == tally["silent acceptances"] == tally["changed trees"] == 0
    assert tally["one-line errors"] == tally["bad inputs"]


# --- what still works, and touches only what it owns -------------------------------------------------


def _world(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    top = tmp_path / "world"
    shutil.copytree(template, top, symlinks=True)
    monkeypatch.chdir(top / "root")
    return top


def _changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def test_readers_write_nothing(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = _world(template, tmp_path, monkeypatch)
    before = tree_digest(top)
    for args in (["status", "camp"], ["pool", "stats", "pool"], ["coverage", "export", "camp"],
                 ["coverage", "diff", "camp", "results"], ["config", "check", "good.yaml"], ["config", "show"]):
        res = _run(args)
        assert res.exit_code == 0, (args, res.output)
    assert "bp:tvm:10" in _run(["coverage", "export", "camp"]).output
    assert _changed(before, tree_digest(top)) == []  # not even -wal/-shm files next to the databases


def test_status_reads_a_live_campaign_and_leaves_it_alone(template: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    top = _world(template, tmp_path, monkeypatch)
    db = CampaignDB(top / "root" / "camp" / "campaign.db")  # the campaign is running: its WAL is open
    try:
        db.add_snapshot({"time": 5.0, "execs": 77, "coverage": 4321, "coverage_backend": "passes",
                         "corpus_size": 3, "findings": 0, "unique_findings": 0, "invalid": 0, "wall": 1.0})
        res = _run(["status", "camp"])
        assert res.exit_code == 0 and "4321" in res.output, res.output
    finally:
        db.close()


def test_status_of_a_campaign_on_read_only_media(template: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    top = _world(template, tmp_path, monkeypatch)
    camp = top / "root" / "camp"
    for p in (camp / "campaign.db", camp):
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        before = tree_digest(top)
        res = _run(["status", "camp"])
        assert res.exit_code == 0, res.output
        assert _changed(before, tree_digest(top)) == []
    finally:
        camp.chmod(0o755)


def test_pool_select_writes_only_into_its_destination(template: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    top = _world(template, tmp_path, monkeypatch)
    before = tree_digest(top)
    res = _run(["pool", "select", "-H", "small", "-n", "2", "pool", "dst"])
    assert res.exit_code == 0, res.output
    changed = _changed(before, tree_digest(top))
    assert changed and all(c.startswith("root/dst") for c in changed), changed
    first = sorted(p.name for p in (top / "root" / "dst").iterdir())
    res = _run(["pool", "select", "-H", "small", "-n", "1", "pool", "dst"])  # an earlier selection is replaced
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (top / "root" / "dst").iterdir()) == first  # ...and nothing is deleted
    assert len(json.loads((top / "root" / "dst" / "manifest.json").read_text())["models"]) == 1
    assert _run(["pool", "stats", "dst"]).exit_code == 0


def test_generate_writes_only_into_its_pool(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from seedzer.generate import driver as driver_mod
    from tests.unit.generate.test_driver import _fake

    monkeypatch.setattr(driver_mod, "_results", _fake())
    top = _world(template, tmp_path, monkeypatch)
    (top / "root" / "gen").mkdir()
    _write(top / "root" / "gen" / "README", "a note that is no model\n")
    before = tree_digest(top)
    res = _run(["generate", "-H", "basic", "-n", "3", "-o", "gen", "--no-progress", "--cache-dir", "gen/.cache"])
    assert res.exit_code == 0, res.output
    changed = _changed(before, tree_digest(top))
    assert changed and all(c.startswith("root/gen/") for c in changed), changed
    assert (top / "root" / "gen" / "README").read_text() == "a note that is no model\n"
    manifest = json.loads((top / "root" / "gen" / "manifest.json").read_text())
    assert all("reference_sha256" in e and "sha256" in e for e in manifest["models"])
    assert _run(["pool", "stats", "gen"]).exit_code == 0


def test_load_with_some_corrupt_models_reports_each_and_exits_1(template: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import seedzer.commands.load as load_cli

    loaded: list[str] = []

    def fake_load_all(loader: Any, paths: Any, jobs: int = 1, on_result: Any = None) -> list[Any]:
        loaded.extend(Path(p).name for p in paths)
        return []

    monkeypatch.setattr(load_cli, "load_all", fake_load_all)
    monkeypatch.setattr(load_cli, "build_report", lambda results, differential: None)
    monkeypatch.setattr(load_cli, "render", lambda report, console: None)
    top = _world(template, tmp_path, monkeypatch)
    mixed = top / "root" / "mixed"
    mixed.mkdir()
    (mixed / "good.onnx").write_bytes(_model_bytes())
    (mixed / "empty.onnx").write_bytes(b"")
    (mixed / "half.onnx").write_bytes(truncated())
    res = _run(["load", "mixed"])
    assert res.exit_code == 1, res.output
    lines = res.stderr.splitlines()
    assert lines[0] == "error: mixed/empty.onnx: ONNX model empty.onnx is empty (0 bytes)"
    assert re.fullmatch(r"error: mixed/half\.onnx: ONNX model half\.onnx is (truncated or corrupt|not valid ONNX).*",
                        lines[1])
    assert lines[2] == "error: mixed: 2 of 3 models were not loaded (unreadable or corrupt, listed above)"
    assert loaded == ["good.onnx"]


# --- the boundary itself -----------------------------------------------------------------------------


def test_a_bug_prints_its_traceback_and_asks_to_be_reported() -> None:
    import click

    from seedzer.cli_group import SeedzerGroup

    @click.group(cls=SeedzerGroup)
    def group() -> None:
        pass

    @group.command()
    def boom() -> None:
        raise RuntimeError("an internal invariant broke")

    res = CliRunner().invoke(group, ["boom"])
    assert res.exit_code == 1
    assert "Traceback (most recent call last)" in res.stderr
    assert "RuntimeError: an internal invariant broke" in res.stderr
    assert res.stderr.rstrip().splitlines()[-1].startswith("internal error: this is a bug in seedzer ")
    assert "please report it" in res.stderr


@pytest.mark.parametrize(("exc", "line"), [
    (FileNotFoundError(2, "No such file or directory", "/x/y"), "error: /x/y: No such file or directory"),
    (PermissionError(13, "Permission denied", "/ro/campaign.db"), "error: /ro/campaign.db: Permission denied"),
    (OSError(30, "Read-only file system", "/media/c"), "error: /media/c: read-only file system"),
    (OSError(28, "No space left on device", "/full/x"), "error: /full/x: no space left on device"),
    (OverflowError("cannot convert float infinity to integer"),
     "error: a value is out of range (cannot convert float infinity to integer)"),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
     "error: input is not UTF-8 text (invalid start byte at byte 0)"),
    (sqlite3.OperationalError("attempt to write a readonly database"),
     "error: database: attempt to write a readonly database"),
])
def test_user_caused_failures_anywhere_are_one_line(exc: Exception, line: str) -> None:
    import click

    from seedzer.cli_group import SeedzerGroup

    @click.group(cls=SeedzerGroup)
    def group() -> None:
        pass

    @group.command()
    def fail() -> None:
        raise exc

    res = CliRunner().invoke(group, ["fail"])
    assert res.exit_code == 2 and res.stderr.splitlines() == [line]


def test_the_real_command_line_in_a_subprocess(tmp_path: Path) -> None:
    """The installed entry point: argv bytes that are not UTF-8, and the exit status the shell sees."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path]))
    cfg = os.fsencode(tmp_path) + b"/bad\xff.yaml"
    with open(cfg, "wb") as fh:
        fh.write(b"fuzz:\n  minutes: .nan\n")
    out = subprocess.run([sys.executable, "-m", "seedzer.cli", "config", "check", cfg], capture_output=True, env=env)
    assert out.returncode == 2
    assert out.stderr.decode() == f"error: {tmp_path}/bad\\xff.yaml: field 'fuzz.minutes' must be > 0 and <= 527040 " \
                                  "(a year), a finite number (got nan)\n"
