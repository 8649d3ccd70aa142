"""The failing model of a bug counted without a gate run, written off the hot path.

A candidate counted against a root the gate already filed (:mod:`seedzer.finding.known`, rule
``known-root``) gets its verdict without a gate run, so nothing wrote the model it fails on: its folder
holds the seed (``seed.onnx``) and the case that rebuilds the mutant. Each such bug waits here for one
background job, started like a re-run of a filtered test case when no candidate waits for the gate: its
kind's ``model_call`` (the graph kind's writes ``model.onnx`` in a forked process and returns the model's
record), and the record goes into its ``meta.json``. A kind whose folders hold their model from the start
has no such call. A campaign resumed re-queues every bug still without its model's record.
"""

from __future__ import annotations

from collections import deque

from seedzer.errors import SeedzerError
from seedzer.execute.background import JobResult
from seedzer.finding.kind import GateCall
from seedzer.finding.meta import BUG, FindingMeta, ModelRecord
from seedzer.finding.registry import kind
from seedzer.finding.store import FindingStore

MODEL_KEY = "model:"
"""How a model job's background key starts (the gate's jobs are keyed by signature)."""


class ModelFills:
    """The bugs waiting for their failing model (see the module docstring)."""

    def __init__(self, findings: FindingStore) -> None:
        self.findings = findings
        self.waiting: deque[tuple[str, GateCall]] = deque()
        self.running: set[str] = set()

    def add(self, meta: FindingMeta) -> None:
        """Queue ``meta``'s model when it is a bug without a model's record whose kind writes one."""
        if meta.verdict != BUG or meta.failing_model is not None:
            return
        try:
            call = kind(meta.kind).model_call(self.findings.root / meta.signature, meta)
        except SeedzerError:  # a folder of a kind this Seedzer does not know: it keeps what it holds
            return
        if call is not None:
            self.waiting.append((meta.signature, call))

    def next_call(self) -> tuple[str, GateCall] | None:
        """The next model job's key and call (None: none waits)."""
        if not self.waiting:
            return None
        signature, call = self.waiting.popleft()
        self.running.add(signature)
        return f"{MODEL_KEY}{signature}", call

    def apply(self, job: JobResult) -> str | None:
        """Record a finished model job into its finding's ``meta.json``: the outcome in one line (None: the
        job is not a model job)."""
        signature = job.key.removeprefix(MODEL_KEY)
        if not job.key.startswith(MODEL_KEY) or signature not in self.running:
            return None
        self.running.discard(signature)
        if job.error is not None:
            return f"the failing model of {signature} could not be written ({job.error.splitlines()[0][:200]})"
        if not isinstance(job.value, ModelRecord):
            return f"the failing model of {signature} was not written (its model mutations no longer apply)"
        meta = self.findings.load(signature)
        meta.failing_model = job.value
        self.findings.update(meta)
        return "written"
