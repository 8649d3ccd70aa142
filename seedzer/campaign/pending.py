"""The line of corpus entries a campaign runs as they are before it mutates anything.

Loading puts every new seed in it; a resumed campaign puts the entries that never ran; a worker's
death puts back the seeds that waited in its pipe (they never ran) and takes out every entry of a
quarantined seed. The feeder (:mod:`seedzer.campaign.feeding`) takes from its front.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

from seedzer.store.corpus import CorpusEntry


class PendingSeeds:
    """The entries waiting for their own run, first come first served."""

    def __init__(self) -> None:
        self._line: deque[CorpusEntry] = deque()

    def __len__(self) -> int:
        return len(self._line)

    def __bool__(self) -> bool:
        return bool(self._line)

    def __iter__(self) -> Iterator[CorpusEntry]:
        return iter(self._line)

    def __contains__(self, entry: object) -> bool:
        return entry in self._line

    def append(self, entry: CorpusEntry) -> None:
        """``entry`` waits behind the others (a new seed)."""
        self._line.append(entry)

    def extend(self, entries: Iterable[CorpusEntry]) -> None:
        """Each of ``entries`` not in line yet waits behind the others (a resumed corpus's entries that
        never ran)."""
        for entry in entries:
            if entry not in self._line:
                self._line.append(entry)

    def put_back(self, entry: CorpusEntry) -> None:
        """``entry`` goes first (a seed that waited behind a test case whose worker died)."""
        self._line.appendleft(entry)

    def pop(self) -> CorpusEntry | None:
        """The first entry in line, taken out (None: the line is empty)."""
        return self._line.popleft() if self._line else None

    def drop_seed(self, seed_id: str) -> None:
        """Take out every entry of the seed ``seed_id`` (quarantined: never run again)."""
        self._line = deque(e for e in self._line if e.seed_id != seed_id)
