"""What a worker needs to build a native coverage collector (plain, picklable; imports nothing else)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CollectorSpec:
    """What a worker needs to build a collector: the backend name and plain, picklable options.

    ``options`` are backend-specific (e.g. a shared-memory name and a block table path); they are
    filled in by the campaign process and travel to workers inside ``WorkerSettings``.
    """

    name: str
    options: dict[str, Any] = field(default_factory=dict)
