"""Heuristics: shipped files, lookup by name and path, schema errors, Python plugins, selection."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from seedzer.errors import ConfigError
from seedzer.generate.heuristics import (
    YamlHeuristic,
    available_heuristics,
    candidate_target,
    heuristics_dir,
    load_heuristic,
    rank_select,
)
from seedzer.generate.options import (
    ConvOptions,
    GenerationOptions,
    SelectionFilter,
    SelectionOptions,
    generation_from_dict,
    parse_generation,
)

REQUIRED = {"basic", "big", "conv1", "conv3", "conv5", "edge", "reach", "small", "zoo"}


def _write(tmp_path: Path, text: str, name: str = "h.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _one_line_error(spec: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_heuristic(spec)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def test_shipped_heuristics_all_load() -> None:
    assert set(available_heuristics()) >= REQUIRED
    assert heuristics_dir().name in ("heuristics", "_heuristics")
    for name in REQUIRED:
        h = load_heuristic(name)
        assert h.name == name
        assert isinstance(h.generation_options(), dict)


def test_shipped_heuristics_encode_their_property() -> None:
    for name, sizes in (("conv1", [1]), ("conv3", [3])):
        g = load_heuristic(name).generation
        assert g.conv.kernel_sizes == tuple(sizes) and "core.NCHWConv2d" in g.require_ops
    conv5 = load_heuristic("conv5").generation.conv
    assert conv5.kernel_sizes is not None and min(conv5.kernel_sizes) >= 5
    small, big = load_heuristic("small"), load_heuristic("big")
    assert isinstance(small, YamlHeuristic) and isinstance(big, YamlHeuristic)
    assert small.generation == big.generation  # they differ only in selection
    assert small.selection.order == "ascending" and big.selection.order == "descending"
    assert candidate_target(small, 5) == 20
    assert all(load_heuristic(n).identity_selection for n in ("basic", "conv1", "conv3", "conv5", "zoo"))
    assert load_heuristic("zoo").generation.source == "zoo"
    edge = load_heuristic("edge")
    assert isinstance(edge, YamlHeuristic) and edge.generation.edge.active
    assert edge.selection.sort_by == ("edge",) and edge.selection.order == "descending"
    assert 0 in (edge.generation.rank_choices or ())
    reach = load_heuristic("reach")
    assert isinstance(reach, YamlHeuristic) and reach.identity_selection
    assert reach.generation.insert.operators == 4 and 0 < reach.generation.insert.old_opsets < 1


def test_unknown_heuristic_lists_known_ones() -> None:
    msg = _one_line_error("no-such-heuristic")
    assert "unknown heuristic 'no-such-heuristic'" in msg and "conv3" in msg


def test_missing_heuristic_file() -> None:
    assert "not found" in _one_line_error("nowhere/h.yaml")


def test_heuristic_by_path(tmp_path: Path) -> None:
    path = _write(tmp_path, "generation: {max_nodes: 3, conv: {kernel_sizes: [3]}}\nselection: {}\n")
    h = load_heuristic(str(path))
    assert h.name == "h" and h.generation.max_nodes == 3 and h.generation.conv.kernel_sizes == (3,)


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "generation:\n  max_nodes: [1, 2\nselection: {}\n")
    msg = _one_line_error(str(path))
    assert str(path) in msg and "line" in msg and "malformed YAML" in msg


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("generation: {max_nodez: 3}", "generation.max_nodez: unknown key"),
        ("generation: {max_nodes: three}", "generation.max_nodes: expected an integer >= 1"),
        ("generation: {max_nodes: 0}", "generation.max_nodes: expected an integer >= 1"),
        ("generation: {conv: {kernel_sizes: three}}", "generation.conv.kernel_sizes: expected a non-empty list"),
        ("generation: {conv: {kernel_size: [3]}}", "generation.conv.kernel_size: unknown key"),
        ("generation: {dtypes: [float128]}", "generation.dtypes: expected items among"),
        ("generation: {op_weights: {core.ReLU: -1}}", "generation.op_weights.core.ReLU: expected a non-negative"),
        ("generation: {min_nodes: 9, max_nodes: 3}", "generation.min_nodes: expected a value <= max_nodes"),
        ("generation: {include_ops: [a], exclude_ops: [b]}", "cannot be combined"),
        ("generation: {source: web}", "generation.source: expected one of nnsmith, zoo"),
        ("selection: {sort_by: [size]}", "selection.sort_by: expected items among"),
        ("selection: {oversample: 0.5}", "selection.oversample: expected a number between 1 and 100"),
        ("selection: {filter: {min_nodes: x}}", "selection.filter.min_nodes: expected an integer >= 0"),
        ("selection: {order: random}", "selection.order: expected one of ascending, descending"),
        ("generation: {insert: {operators: -1}}", "generation.insert.operators: expected an integer between 0 and 32"),
        ("generation: {insert: {operators: 2, old_opsets: 2}}", "generation.insert.old_opsets: expected a probability"),
        ("generation: {insert: {old_opsets: 0.5}}", "generation.insert.old_opsets: expected 0 while operators is 0"),
        ("generation: {insert: {operatorz: 2}}", "generation.insert.operatorz: unknown key"),
        ("generations: {}", "generations: unknown key"),
        ("- a list", "expected a mapping"),
    ],
)
def test_schema_errors_name_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    path = _write(tmp_path, text + "\n")
    msg = _one_line_error(str(path))
    assert msg.startswith(str(path)) and field in msg


def test_python_heuristic_hooks(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
        OVERSAMPLE = 2

        def generation_options():
            return {"max_nodes": 4, "conv": {"kernel_sizes": [3]}}

        def select(entries, count):
            return sorted(entries, key=lambda e: -e["nodes"])[:count]
        """,
        name="mine.py",
    )
    h = load_heuristic(str(path))
    assert h.name == "mine" and h.generation.max_nodes == 4 and h.oversample == 2.0
    assert not h.identity_selection
    entries = [{"file": f"m{i}.onnx", "nodes": i} for i in range(5)]
    assert [e["nodes"] for e in h.select(entries, 2)] == [4, 3]


def test_python_heuristic_errors(tmp_path: Path) -> None:
    no_hook = _write(tmp_path, "def generation_options():\n    return {}\n", name="a.py")
    assert "select: missing hook" in _one_line_error(str(no_hook))
    bad_opts = _write(
        tmp_path, "def generation_options():\n    return {'max_nodes': 'x'}\ndef select(e, c):\n    return e\n", "b.py"
    )
    msg = _one_line_error(str(bad_opts))
    assert str(bad_opts) in msg and "generation.max_nodes" in msg
    broken = _write(tmp_path, "import no_such_module_here\n", name="c.py")
    assert "import failed (ModuleNotFoundError" in _one_line_error(str(broken))
    foreign = _write(
        tmp_path, "def generation_options():\n    return {}\ndef select(e, c):\n    return [{'file': 'x'}]\n", "d.py"
    )
    with pytest.raises(ConfigError, match="not in the pool"):
        load_heuristic(str(foreign)).select([{"file": "m.onnx"}], 1)


def _entry(i: int, weights: int, nodes: int, ops: list[str]) -> dict[str, object]:
    return {"file": f"m{i}.onnx", "index": i, "weights": weights, "nodes": nodes, "ops": ops, "conv_kernels": []}


def test_rank_select_sorts_by_rank_sum_and_filters() -> None:
    entries = [
        _entry(0, 100, 10, ["Conv"]),
        _entry(1, 5, 3, ["Relu"]),
        _entry(2, 500, 30, ["Conv", "Relu"]),
        _entry(3, 1000, 40, ["Conv"]),
    ]
    small = load_heuristic("small")
    big = load_heuristic("big")
    assert [e["index"] for e in small.select(entries, 2)] == [1, 0]
    assert [e["index"] for e in big.select(entries, 2)] == [3, 2]
    with_conv = SelectionOptions(filter=SelectionFilter(require_ops=("Conv",), max_nodes=35))
    assert [e["index"] for e in rank_select(entries, 10, with_conv)] == [0, 2]
    assert rank_select(entries, 10, SelectionOptions()) == entries


def test_options_helpers() -> None:
    conv = ConvOptions(kernel_sizes=(3,), square=True)
    assert conv.allows([3, 3]) and conv.allows([3]) and not conv.allows([3, 5]) and not conv.allows([1, 1])
    assert ConvOptions(min_kernel=5).allows([5, 7]) is False  # square by default
    assert ConvOptions(min_kernel=5, square=False).allows([5, 7])
    opts = parse_generation({"min_nodes": 4, "max_nodes": 12, "conv": {"kernel_sizes": [3]}}, "x.yaml")
    assert opts.with_max_nodes(2).max_nodes == 2 and opts.with_max_nodes(2).min_nodes == 2
    assert generation_from_dict(opts.to_dict()) == opts
    assert GenerationOptions().to_dict()["dtypes"] == ["float32"]
    assert "insert" not in GenerationOptions().to_dict()  # pools made before insertions keep their identity
    reach = parse_generation({"insert": {"operators": 3, "old_opsets": 0.2}}, "r.yaml")
    assert reach.to_dict()["insert"] == {"operators": 3, "old_opsets": 0.2}
    assert generation_from_dict(reach.to_dict()) == reach
    with pytest.raises(ConfigError, match="--max-nodes"):
        opts.with_max_nodes(0)
