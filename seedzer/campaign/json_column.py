"""A JSON object stored in a campaign.db text column, read back leniently."""

from __future__ import annotations

import json
from typing import Any


def json_object(text: str | None) -> dict[str, Any]:
    """``text`` parsed as a JSON object; empty for a missing column (older snapshots), unreadable text
    or JSON that is not an object."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
