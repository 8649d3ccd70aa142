"""Every seedzer subpackage is listed in pyproject.toml (the list is explicit, see there)."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_subpackage_is_listed() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(("seedzer", *p.parent.relative_to(ROOT / "seedzer").parts))
             for p in (ROOT / "seedzer").rglob("__init__.py")}
    assert "seedzer._heuristics" in listed
    assert found <= listed, f"missing from pyproject packages: {sorted(found - listed)}"
