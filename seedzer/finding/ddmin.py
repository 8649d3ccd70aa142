"""Delta debugging (Zeller's ddmin): a 1-minimal sub-list of items that keeps a test true. Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def split(items: Sequence[T], n: int) -> list[list[T]]:
    """Split ``items`` into ``n`` contiguous chunks of nearly equal size (none empty)."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return out


def ddmin(items: Sequence[T], test: Callable[[list[T]], bool],
          out_of_time: Callable[[], bool] = lambda: False) -> list[T]:
    """Reduce ``items`` (for which ``test`` holds) to a 1-minimal sub-list for which it still holds.

    The empty list is tried first. Chunks, then complements, are tested at increasing
    granularity; ``out_of_time`` stops early with the best list found so far (the order of
    the remaining items is always preserved).
    """
    current = list(items)
    if current and test([]):
        return []
    n = 2
    while len(current) >= 2 and not out_of_time():
        chunks = split(current, n)
        for chunk in chunks:
            if len(chunk) < len(current) and test(chunk):
                current, n = chunk, 2
                break
        else:
            for i in range(len(chunks)):
                rest = [x for j, c in enumerate(chunks) if j != i for x in c]
                if test(rest):
                    current, n = rest, max(n - 1, 2)
                    break
                if out_of_time():
                    return current
            else:
                if n >= len(current):
                    break
                n = min(len(current), 2 * n)
    if len(current) == 1 and not out_of_time() and test([]):
        return []
    return current
