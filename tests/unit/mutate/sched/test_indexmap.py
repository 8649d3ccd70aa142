"""IndexMaps written without TVM's serializer read back as the maps TVM builds (drives TVM's reader)."""

from __future__ import annotations

import pytest

from seedzer.mutate.sched.indexmap import fuse_dims, index_map_json, permutation, split_dim


@pytest.mark.parametrize(("final", "expected"), [
    (permutation([2, 0, 1]), lambda a, b, c: (c, a, b)),
    (split_dim(3, 1, 4), lambda a, b, c: (a, b // 4, c, b % 4)),
    (fuse_dims(3, 0, 7), lambda a, b, c: (a * 7 + b, c)),
])
def test_a_written_map_reads_back_as_the_map_tvm_builds(final: list, expected: object) -> None:
    import tvm
    import tvm_ffi
    from tvm.tirx import IndexMap

    ours = tvm.ir.load_json(index_map_json(["a0", "a1", "a2"], final))
    theirs = IndexMap.from_func(expected, index_dtype="int64")
    assert isinstance(ours, IndexMap)
    assert tvm_ffi.structural_equal(ours, theirs, map_free_vars=True)
