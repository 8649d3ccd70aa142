"""The campaign's allocation at work: what each test case earned, the roots it credits, the weights the
feeder draws with, and the state a resumed campaign starts from.

:class:`Allocator` owns the campaign's :class:`~seedzer.campaign.allocation.Allocation`. It learns from
every test case the campaign takes in (:meth:`Allocator.ran`: its worker-seconds and its reward: new
coverage features, passes triggered for the first time) and from every bug root the filing gate files
(:meth:`Allocator.filed`: a root new to the ledger earns ``allocation.reward_root`` for the level, the
mutations and the seed model of the test case that reached it; one the ledger knew, or one this
campaign filed before, earns nothing). The feeder asks it for the levels' weights, the energy of a
corpus entry (its seed model's relative yield times its fatigue) and the factors a worker applies to its
level's mutation weights. Every snapshot writes the weights and the state to campaign.db.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from seedzer.campaign.allocation import (
    LEVELS,
    MODELS,
    Allocation,
    AllocationSettings,
    Credit,
    mutation_group,
)
from seedzer.config import Config
from seedzer.execute.records import TestCaseInfo
from seedzer.finding.meta import FindingMeta
from seedzer.store.allocation_rows import STATE_META, ArmRow
from seedzer.store.corpus import Corpus, CorpusEntry
from seedzer.store.db import CampaignDB


class Allocator:
    """The allocation of one campaign (see the module docstring)."""

    def __init__(self, cfg: Config, mutations: Mapping[str, Iterable[str]], corpus: Corpus,
                 known: Callable[[], set[str]], say: Callable[[str], None]) -> None:
        """``mutations``: each level's mutation names (its mutation group's arms); ``known``: the roots the
        ledger held before this campaign (read when the first root is filed)."""
        levels = cfg.levels.weights()
        base: dict[str, dict[str, float]] = {LEVELS: dict(levels), MODELS: {}}
        for name in levels:
            base[mutation_group(name)] = dict.fromkeys(sorted(mutations.get(name, ())), 1.0)
        self.allocation = Allocation(AllocationSettings.of(cfg.allocation), base)
        self.corpus = corpus
        self._known_source = known
        self._known: set[str] | None = None
        self.say = say
        self._model_share: dict[str, float] | None = None
        """Each seed model's weight over the heaviest one's (refreshed at every snapshot)."""
        self.credited: set[str] = set()
        """Roots whose reward was given (once each)."""
        self.seen_before = 0
        """Bug roots filed this campaign that the ledger already held."""

    # --- learning ---------------------------------------------------------------------------
    def credit_of(self, tc: TestCaseInfo) -> Credit:
        """The arms test case ``tc`` belongs to: its level, its mutations and its parent's seed model."""
        parent = self.corpus.by_id.get(tc.parent or "")
        return Credit(tc.level, tuple(tc.mutators), parent.origin if parent is not None else "")

    def ran(self, tc: TestCaseInfo, seconds: float, new_features: int, first_triggers: int, *,
            repeat: bool = False) -> None:
        """Test case ``tc`` took ``seconds`` of worker time and reached ``new_features`` coverage features
        and ``first_triggers`` passes first; ``repeat``: it re-hit a bug filed before (its entry tires
        unless it also reached new coverage)."""
        reward = self.allocation.settings.rewards.of(new_features, first_triggers)
        self.allocation.observe(self.credit_of(tc), seconds, reward)
        if tc.task == "fuzz" and tc.parent:
            self.allocation.fatigue.observe(tc.parent, known_root=repeat, new_coverage=new_features > 0)

    def filed(self, meta: FindingMeta) -> bool:
        """A bug root the gate filed for the first time in this campaign (``meta``: its finding): credit it
        when the ledger did not hold it; whether it was new to the ledger."""
        root = meta.root_signature
        if not root or root in self.credited:
            return False
        self.credited.add(root)
        if self._known is None:
            self._known = self._known_source()
        if root in self._known or meta.status == "known":
            self.seen_before += 1
            return False
        parent = self.corpus.by_id.get(meta.parent or "")
        origin = (meta.origin or (parent.origin if parent is not None else "")).rsplit("/", 1)[-1]
        fuzzed = meta.kind in self.allocation.group(LEVELS).base  # a pool model's loading is no level's draw
        self.allocation.credit_root(Credit(meta.kind if fuzzed else "", tuple(meta.mutators) if fuzzed else (),
                                           origin))
        return True

    # --- drawing ----------------------------------------------------------------------------
    def level_weights(self, present: Iterable[str]) -> dict[str, float]:
        """The draw probabilities of the levels ``present`` (those the corpus has entries of)."""
        return self.allocation.weights(LEVELS, list(present))

    def energy(self, entry: CorpusEntry) -> float:
        """A corpus entry's energy in (0, 1]: its seed model's weight relative to the heaviest model's (as
        of the last snapshot), times its fatigue."""
        if self._model_share is None:
            self._refresh_models()
        assert self._model_share is not None
        return self._model_share.get(entry.origin, 1.0) * self.allocation.fatigue.energy(entry.seed_id)

    def _refresh_models(self) -> None:
        models = self.allocation.weights(MODELS, sorted({e.origin for e in self.corpus.entries if e.origin}))
        top = max(models.values(), default=0.0)
        self._model_share = {m: w / top for m, w in models.items()} if top > 0 else {}

    def mutation_factors(self, level: str) -> tuple[tuple[str, float], ...]:
        """Per mutation of ``level``: its adaptive weight over its configured one (1: unchanged), the
        factor the worker multiplies that mutation's weight by; empty while they are all 1."""
        group = mutation_group(level)
        weights = self.allocation.weights(group)
        if not weights or not self.allocation.adapts(group):
            return ()
        fixed = 1.0 / len(weights)
        factors = tuple((name, round(w / fixed, 6)) for name, w in sorted(weights.items()))
        return () if all(abs(f - 1.0) < 1e-9 for _, f in factors) else factors

    # --- saving -----------------------------------------------------------------------------
    def rows(self) -> list[ArmRow]:
        """Every arm's row, as a snapshot records it (seed models only when adaptive: they have no
        configured weight to show otherwise)."""
        return [row for row in self.allocation.view()
                if row.group != MODELS or self.allocation.adapts(MODELS)]

    def save(self, db: CampaignDB, when: float) -> None:
        """Write the weights now and the state (at campaign second ``when``)."""
        db.record_allocation(round(when, 3), self.rows(), self.allocation.to_json())
        self._refresh_models()

    def restore(self, db: CampaignDB) -> None:
        """Start from the state a resumed campaign saved; a missing or corrupt one starts from the configured
        weights, said in one line."""
        try:
            state = db.get_meta(STATE_META)
        except ValueError:
            state = ""
        if state is None:
            self.say("allocation: no saved state in campaign.db; starting from the configured weights")
            return
        try:
            self.allocation.restore(state)
        except (ValueError, TypeError) as exc:
            self.say(f"allocation: the saved state in campaign.db is corrupt ({exc}); starting from the "
                     "configured weights")
