"""Breakpoint coverage synced to a Ray node without the campaign's hit map (AFL ``-M/-S`` style).

A worker actor on a node where the campaign's ``coverage.hitmap`` path does not exist starts from a
node-local copy holding the blocks the campaign knows, and each batch of tasks brings the blocks the
campaign learned since, so the node's workers never arm (or report) them again. Uses the real block
table of the installed TVM (built once per session by the integration conftest); no Ray needed: the
actor class is driven directly.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

from seedzer.coverage.blocktable import DEFAULT_CACHE, load_or_build, tvm_compiler_library
from seedzer.coverage.hitmap import HitMap
from seedzer.coverage.native import prepare_collector
from seedzer.execute.fake_worker import fake_worker_main
from seedzer.execute.ray_actor import WorkerActor
from seedzer.execute.ray_pool import CoverageSync
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.common import Stage
from tests.unit.execute.test_ray_pool import KEY, Driven, exec_batch


def test_blocks_learned_by_the_campaign_reach_a_node_local_hit_map(tmp_path: Path) -> None:
    spec = prepare_collector("breakpoints", tmp_path, [], str(DEFAULT_CACHE), "blocks")
    assert spec is not None
    table = load_or_build(tvm_compiler_library(), DEFAULT_CACHE, "blocks", progress=False)
    sync = CoverageSync(WorkerSettings(collector=spec))
    assert sync.blocks == len(table.offsets) and sync.initial() == []
    sync.learn([table.feature(2)])
    assert sync.log == [] and sync.initial() == []  # no node has a map of its own yet: nothing to sync
    sync.needed = True  # as when an actor reports a node-local map
    sync.learn([table.feature(5), table.feature(9), "line:x", "pass:Simplify"])
    assert sync.log == [5, 9] and sync.initial() == [5, 9]  # the campaign's own map is marked too

    gone = str(tmp_path / "elsewhere" / "coverage.hitmap")  # as on a node without the campaign's folder
    away = SimpleNamespace(lines=4, log_dir=None,
                           collector=dataclasses.replace(spec, options={**spec.options, "hitmap": gone}))
    actor = WorkerActor(3, away, {Stage.RUN: 10.0}, fake_worker_main, (), sync.blocks, sync.initial(),
                        authkey=KEY)
    driven = Driven(actor)
    start = driven.start
    try:
        assert start.local_hitmap is not None and start.local_hitmap != gone
        local = HitMap(start.local_hitmap, sync.blocks)
        assert local.array.nonzero()[0].tolist() == [5, 9]
        sync.learn([table.feature(11)])
        driven.answers(1, exec_batch(["a"]), sync.log[2:])  # the marks travel with the next tasks
        assert local.array.nonzero()[0].tolist() == [5, 9, 11]
        assert not Path(gone).exists()
    finally:
        driven.close()
