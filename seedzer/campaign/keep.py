"""The campaign's keep rule: which test cases join the corpus, and what their parents learn from it.

:class:`KeepRule` is the one statement of it; the campaign loop (:mod:`seedzer.campaign.loop`)
applies it to every worker result after its coverage was merged and its observation judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from seedzer.execute.records import TestCaseInfo
from seedzer.kernel.common import Observation, Symptom
from seedzer.seed import drop_passes, passes_from_json, passes_to_json
from seedzer.store.corpus import CorpusEntry, entry_id


@dataclass(frozen=True)
class KeepRule:
    """When a test case's result is kept in the corpus (Tzer's feedback, as in docs/design.md §6).

    * A test case run as given (``exec``: an initial seed, or a corpus entry run again) is never kept
      anew: it is in the corpus already, and is marked executed by the worker that ran it (whose
      parse cache now holds it).
    * A mutant (``fuzz``) is kept when its execution reached coverage features never seen before
      (``gain > 0``) *and* ran cleanly (``ok``: a failing or invalid mutant is a finding or nothing,
      never a parent). Its stored pass sequence goes without the passes that left the IR unchanged
      (``unchanged``): they add nothing. It inherits its parent's origin and operator, and its
      parent's count of unproductive mutations restarts at 0.
    * Any other mutant counts as one more unproductive mutation of its parent (what Tzer's tolerance
      schedule reads to decide when to mutate passes as well as the IR).
    """

    def apply(self, tc: TestCaseInfo, gain: int, observation: Observation, unchanged: list[int],
              parent: CorpusEntry | None, worker: int) -> CorpusEntry | None:
        """The corpus entry of the test case ``tc`` (from its judged ``observation`` and coverage
        ``gain``), or None when it is not kept; updates ``parent`` as the rule says."""
        if tc.task == "exec":
            if parent is not None:
                parent.executed, parent.worker = True, worker
            return None
        if gain > 0 and observation.symptom is Symptom.OK:
            passes = drop_passes(passes_from_json(tc.passes), unchanged)
            entry = CorpusEntry(entry_id(tc.level, tc.script, passes), tc.script, passes_to_json(passes),
                                parent.origin if parent else "", tc.parent, parent.op if parent else "",
                                executed=True, worker=worker, level=tc.level)
            if parent is not None:
                parent.failures = 0
            return entry
        if parent is not None:
            parent.failures += 1
        return None
