"""Oracles: which observations are findings, and the signatures findings are deduplicated by."""

from seedzer.oracles.registry import ORACLES, judge, make_oracles
from seedzer.oracles.signature import SignatureKey, raw_key, root_key

__all__ = ["ORACLES", "SignatureKey", "judge", "make_oracles", "raw_key", "root_key"]
