"""Counting a new candidate against verdicts the gate already gave, without running the gate again.

Every low-level candidate is filed with a *prediction* of its root signature (``meta.json``
``predicted_root``, with the ``culprit_guess`` it assumes): :func:`seedzer.oracles.signature.root_key`
of the fuzzer's own observation with the failing pass as the culprit (the step of its
``pass_name``; for a wrong result or a slowdown, which surface at no pass, the one fuzzed pass that
changed the IR, if only one did). The raw signature's folder is always written first, so nothing is
lost: ``seedzer recheck`` re-judges a candidate counted here like any other.

A failure whose TVM frames name a shared component (:mod:`seedzer.finding.component`) is predicted
under that component, as the gate keys it.

* **known-root.** When the predicted root is the root of a bug the gate filed, and the culprit the
  gate found for it is exactly the guess, the candidate is counted as one more finding of that root
  (verdict ``bug``, rule ``known-root``) instead of being gated again. It never adds a root: the count
  of unique bugs, and so their precision, is what the gate alone decided. The risk is on recall
  only: a candidate failing the same check in the same pass, whose bisection would have named an
  earlier pass as well (a different root), is counted against the known one.
* **known-dismissal.** When the gate dismissed (not a bug) at least :data:`DISMISSALS_NEEDED`
  candidates of the same predicted key for the same reason code, and never judged a candidate of
  that key a bug, the candidate is counted as dismissed for that reason (rule ``known-dismissal``).
  This is safe for precision (a dismissal never files a bug) and costs recall at most: the
  dismissal reasons depend on the case (its undefined behaviour, the IR form a pass was given), so a
  real bug could hide behind a key twice dismissed. Two concordant dismissals and no bug verdict for
  the key make that unlikely, and the candidate's folder stays for ``seedzer recheck``.

Only verdicts of real gate runs teach (a verdict counted here is never evidence for another).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from seedzer.finding.component import component_of
from seedzer.finding.meta import BUG, NOT_A_BUG, FindingMeta
from seedzer.finding.verdict import Verdict, reason_code
from seedzer.kernel.common import Observation, Symptom, label_parts
from seedzer.oracles.signature import component_key, root_key

KNOWN_ROOT = "known-root"
"""The rule name recorded (``meta.json`` ``gate_rule``) for a candidate counted against a known bug root."""
KNOWN_DISMISSAL = "known-dismissal"
"""The rule name recorded for a candidate counted as dismissed like its predicted key's earlier candidates."""
RULES = (KNOWN_ROOT, KNOWN_DISMISSAL)
"""The rules of this module: their verdicts never teach."""
PREDICTED = "predicted_root"
"""The ``meta.json`` key of a candidate's predicted root signature."""
GUESS = "culprit_guess"
"""The ``meta.json`` key of the culprit its prediction assumes."""
DISMISSALS_NEEDED = 2
"""Gate dismissals of one predicted key, for one reason code, before its candidates are counted as dismissed."""


def culprit_guess(observation: Observation, changed_passes: Sequence[str]) -> list[str] | None:
    """The culprit the prediction assumes: the step the failure surfaced at (an error, a crash,
    ill-formed IR, a hang); for a wrong result or a slowdown, the only fuzzed pass that changed the
    IR. None when there is no single guess (nothing is predicted: the gate judges)."""
    if observation.symptom in (Symptom.MISMATCH, Symptom.PERF):
        changed = sorted(set(changed_passes))
        return changed if len(changed) == 1 else None
    step = label_parts(observation.pass_name or "")[1]
    return [step] if step else None


def predict(kind: str, observation: Observation, names: Iterable[str],
            changed_passes: Sequence[str]) -> dict[str, object]:
    """The ``meta.json`` entries of a candidate's prediction (:data:`PREDICTED`, :data:`GUESS`), or
    none when there is no culprit guess. A failure whose frames name a shared component is predicted as
    the gate keys it (:func:`~seedzer.oracles.signature.component_key`, the component as its culprit),
    whatever step it surfaced at."""
    component = component_of(observation)
    if component is not None:
        return {PREDICTED: component_key(observation, component.name, names).digest(), GUESS: [component.name]}
    guess = culprit_guess(observation, changed_passes)
    if guess is None:
        return {}
    return {PREDICTED: root_key(kind, observation, guess, names).digest(), GUESS: guess}


@dataclass
class KnownVerdicts:
    """What the gate decided so far, by root and by predicted key (see the module docstring)."""

    roots: dict[str, list[str]] = field(default_factory=dict)
    """Bug root signature -> the culprit the gate found."""
    dismissed: dict[str, Counter[str]] = field(default_factory=dict)
    """Predicted key -> reason code -> gate dismissals."""
    judged_bug: set[str] = field(default_factory=set)
    """Predicted keys of candidates the gate judged bugs."""

    def learn(self, meta: FindingMeta) -> None:
        """Take in a judged candidate's verdict (ignored when it was counted here, not gated)."""
        if meta.extra.get("gate_rule") in RULES:
            return
        predicted = meta.extra.get(PREDICTED)
        if meta.verdict == BUG:
            if meta.root_signature:
                self.roots.setdefault(meta.root_signature, list(meta.culprit))
            if isinstance(predicted, str):
                self.judged_bug.add(predicted)
        elif meta.verdict == NOT_A_BUG and isinstance(predicted, str):
            self.dismissed.setdefault(predicted, Counter())[reason_code(meta.verdict_reason)] += 1

    def verdict(self, meta: FindingMeta) -> Verdict | None:
        """The verdict a pending candidate is counted with, without a gate run; None: it needs the gate."""
        predicted, guess = meta.extra.get(PREDICTED), meta.extra.get(GUESS)
        if not isinstance(predicted, str) or not isinstance(guess, list):
            return None
        culprit = self.roots.get(predicted)
        if culprit is not None and culprit == guess:
            note = (f"counted against the known root {predicted} (culprit {' + '.join(culprit)}) without a gate "
                    "run; `seedzer recheck` judges it on its own")
            return Verdict(meta.signature, BUG, f"bug: {note}", None, meta.observation, list(culprit), predicted,
                           notes=[note], rule=KNOWN_ROOT)
        if culprit is not None or predicted in self.judged_bug:  # mixed evidence: the gate judges
            return None
        counts = self.dismissed.get(predicted, Counter())
        code, times = max(counts.items(), key=lambda item: (item[1], item[0]), default=("", 0))
        if times < DISMISSALS_NEEDED:
            return None
        note = (f"counted as dismissed without a gate run: the gate dismissed {times} candidates of the predicted "
                f"root {predicted} as {code} and judged none a bug; `seedzer recheck` judges it on its own")
        return Verdict(meta.signature, NOT_A_BUG, f"{code}: {note}", None, meta.observation, notes=[note],
                       rule=KNOWN_DISMISSAL)
