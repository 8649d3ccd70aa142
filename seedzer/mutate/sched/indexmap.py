"""IndexMaps as TVM's trace JSON stores them, written without TVM's serializer.

A trace stores an IndexMap argument (``transform_layout``, ``transform_block_layout``,
``reindex_cache_read``/``write``) as the JSON graph of ``tvm.ir.save_json``. With apache-tvm-ffi
0.1.15 (what pip installs for apache-tvm 0.27.0.post1, which asks for ``>=0.1.14.post0``) that
serializer segfaults on any object with a dtype field, while reading the graph back works. So the
drawers write the small graphs they need here: an IndexMap from index variables to expressions of
them (``+``, ``*``, ``//``, ``%`` and integer constants), exactly in the layout TVM writes (a test
reads each back with ``tvm.ir.load_json`` and compares it with the map TVM builds). TVM-free.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

Expr = Any
"""An index expression: ``("var", k)`` (the k-th index), ``("int", value)``, or ``(op, a, b)`` with
``op`` in :data:`OPS`."""
OPS = {"add": "prim.Add", "mul": "prim.Mul", "floordiv": "prim.FloorDiv", "floormod": "prim.FloorMod"}
"""The binary operators an index expression may use, with their node types."""
TVM_VERSION = "0.27.0.post1"


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = [{"type": "None"}]

    def add(self, node: dict[str, Any]) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1


def index_map_json(names: Sequence[str], final: Sequence[Expr], dtype: str = "int64") -> str:
    """The JSON graph of the IndexMap ``lambda *names: final`` with index variables of ``dtype``."""
    graph = _Graph()
    ty = graph.add({"type": "ir.PrimType", "data": {"span": 0, "dtype": dtype}})
    variables = []
    for name in names:
        text = graph.add({"type": "ffi.String", "data": name})
        variables.append(graph.add({"type": "ir.Var", "data": {"span": 0, "ty": ty, "name": text}}))
    initial = graph.add({"type": "ffi.Array", "data": variables})

    def node(expr: Expr) -> int:
        op = expr[0]
        if op == "var":
            return int(variables[expr[1]])
        if op == "int":
            value = graph.add({"type": "int", "data": int(expr[1])})
            return graph.add({"type": "ir.IntImm", "data": {"span": 0, "ty": ty, "value": value}})
        a, b = node(expr[1]), node(expr[2])
        return graph.add({"type": OPS[op], "data": {"span": 0, "ty": ty, "a": a, "b": b}})

    finals = graph.add({"type": "ffi.Array", "data": [node(e) for e in final]})
    root = graph.add({"type": "tirx.IndexMap", "data": {"initial_indices": initial, "final_indices": finals,
                                                        "inverse_index_map": 0}})
    return json.dumps({"root_index": root, "nodes": graph.nodes, "metadata": {"tvm_version": TVM_VERSION}},
                      separators=(",", ":"))


def permutation(order: Sequence[int]) -> list[Expr]:
    """The final indices of a permutation of ``len(order)`` dimensions."""
    return [("var", k) for k in order]


def split_dim(rank: int, dim: int, factor: int) -> list[Expr]:
    """The final indices that split dimension ``dim`` of ``rank`` into ``(i // factor, ..., i % factor)``
    (the outer part in place, the inner one last)."""
    out: list[Expr] = [("var", k) for k in range(rank)]
    out[dim] = ("floordiv", ("var", dim), ("int", factor))
    return [*out, ("floormod", ("var", dim), ("int", factor))]


def fuse_dims(rank: int, dim: int, extent: int) -> list[Expr]:
    """The final indices that fuse dimensions ``dim`` and ``dim + 1`` (whose extent is ``extent``)."""
    out: list[Expr] = [("var", k) for k in range(rank) if k != dim + 1]
    out[dim] = ("add", ("mul", ("var", dim), ("int", extent)), ("var", dim + 1))
    return out
