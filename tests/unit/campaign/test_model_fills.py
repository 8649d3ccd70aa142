"""The failing model of a bug counted without a gate run, queued and recorded (:mod:`seedzer.campaign.model_fills`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from seedzer.campaign import model_fills
from seedzer.campaign.model_fills import MODEL_KEY, ModelFills
from seedzer.execute.background import JobResult
from seedzer.finding.kind import GateCall
from seedzer.finding.meta import BUG, NOT_A_BUG, FindingMeta, ModelRecord
from seedzer.kernel.common import Observation

RECORD = ModelRecord("model.onnx", "seed.onnx", "model_000001.onnx", "a" * 64, "b" * 64, {"": 17}, {"": 14},
                     ("insert@x[Relu]",), ("tvm.relax.frontend.onnx.from_onnx, then tvm.compile",))


class Store:
    """A finding store of metas in memory (what ModelFills reads and writes of one)."""

    def __init__(self, *metas: FindingMeta) -> None:
        self.root = Path("/findings")
        self.metas = {m.signature: m for m in metas}
        self.updated: list[str] = []

    def load(self, signature: str) -> FindingMeta:
        return self.metas[signature]

    def update(self, meta: FindingMeta) -> None:
        self.updated.append(meta.signature)


class Kind:
    """A kind whose model call is a plain function (``writes``: whether it has one)."""

    def __init__(self, writes: bool) -> None:
        self.writes = writes

    def model_call(self, folder: Path, meta: FindingMeta) -> GateCall | None:
        return GateCall(str, (str(folder),)) if self.writes else None


def meta(signature: str, verdict: str = BUG, kind: str = "graph", record: ModelRecord | None = None) -> FindingMeta:
    return FindingMeta(signature, kind, Observation.ok(), verdict=verdict, failing_model=record)


def job(key: str, value: Any = None, error: str | None = None) -> JobResult:
    return JobResult(key, value, error, 0.1, 0.1)


@pytest.fixture(autouse=True)
def kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_fills, "kind", lambda name: Kind(name == "graph"))


def test_only_bugs_without_a_model_of_a_kind_that_writes_one_are_queued() -> None:
    metas = [meta("a" * 12), meta("b" * 12, NOT_A_BUG), meta("c" * 12, kind="tir"), meta("d" * 12, record=RECORD)]
    fills = ModelFills(Store(*metas))  # type: ignore[arg-type]
    for m in metas:
        fills.add(m)
    key, call = fills.next_call() or ("", None)
    assert key == MODEL_KEY + "a" * 12 and call is not None and call.args == ("/findings/" + "a" * 12,)
    assert fills.next_call() is None


def test_a_written_model_goes_into_meta_and_a_failed_one_is_said() -> None:
    store = Store(meta("a" * 12), meta("b" * 12), meta("c" * 12))
    fills = ModelFills(store)  # type: ignore[arg-type]
    for signature in ("a" * 12, "b" * 12, "c" * 12):
        fills.add(store.metas[signature])
        assert fills.next_call() is not None
    assert fills.apply(job("1" * 12)) is None  # a gate verdict's job is not a model job
    assert fills.apply(job(MODEL_KEY + "a" * 12, RECORD)) == "written"
    assert store.metas["a" * 12].failing_model == RECORD and store.updated == ["a" * 12]
    assert "no longer apply" in (fills.apply(job(MODEL_KEY + "b" * 12, None)) or "")
    said = fills.apply(job(MODEL_KEY + "c" * 12, error="OSError: disk full\ntrace"))
    assert said is not None and "disk full" in said and store.metas["c" * 12].failing_model is None
