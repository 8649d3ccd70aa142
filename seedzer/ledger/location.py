"""Where the ledger is: the configured file, else ``ledger.db`` beside the seed pools (in the directory that
holds the campaign's pool; without a campaign, in the configured ``generate.pool_dir``)."""

from __future__ import annotations

from pathlib import Path

LEDGER_FILE = "ledger.db"
"""The ledger's file name beside the pools."""


def ledger_path(configured: str, pool: Path | None, pool_dir: str) -> Path:
    """The ledger for a campaign of ``pool`` (None: a verb without a campaign)."""
    if configured:
        return Path(configured).expanduser()
    if pool is not None:
        return Path(pool).expanduser().resolve().parent / LEDGER_FILE
    return Path(pool_dir).expanduser() / LEDGER_FILE
