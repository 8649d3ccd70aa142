"""The graph level's object: its seeds (a pool model TVM imports as it is, with no Relax pass and with
each pass order of TVM's own pipelines) and its mutations (MT-DLComp's model relations, spec-edge
changes, operator insertions, special input values, the Relax step mutators). TVM-free: the campaign
process uses it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from seedzer.coverage.collectors import Collector
from seedzer.execute.fuzzing import LevelFuzzer, SlotProgress
from seedzer.execute.settings import WorkerSettings
from seedzer.kernel.graph.case import MODEL_MUTATION_KINDS
from seedzer.levels.graph.entry import SPECIAL_MUTATION, GraphSeed, model_mutation_name
from seedzer.levels.graph.settings import GraphSettings
from seedzer.levels.level import ModelSeeds
from seedzer.mutate.sequence import mutator_names
from seedzer.passes.graph.family import RELAX_FAMILY
from seedzer.seed import PassSpec, passes_to_json
from seedzer.store.api_rows import LevelApi
from seedzer.store.corpus import CorpusEntry, EntryFault, entry_id

NAME = "graph"
"""The level's name (:mod:`seedzer.level_table`), also its finding kind's."""
GRAPH_OP = "graph"
"""The ``op`` of a graph-level corpus entry (a TIR entry's is the operator its PrimFunc came from)."""


def graph_fuzzer(settings: WorkerSettings, progress: SlotProgress, collector: Collector | None) -> LevelFuzzer:
    """The graph fuzzer of a worker (imports TVM and onnx: called in workers only), its cache of
    ``FoldConstant``'s builds answering ``tirx.build`` and its cache of LLVM's code answering
    ``target.build.llvm`` in the worker's process."""
    from seedzer.levels.graph.fuzzer import GraphFuzzer

    fuzzer = GraphFuzzer(progress, collector, settings.section(NAME, GraphSettings))
    fuzzer.folds.install()
    fuzzer.codegen.install()
    return fuzzer


def graph_entries(model: Path, orders: dict[str, list[PassSpec]] | None = None) -> list[CorpusEntry]:
    """The graph-level seeds of a pool model: the model with no Relax pass (TVM's default pipeline
    alone) and with each pass order TVM's own pipelines use (``orders``, by default
    :data:`seedzer.passes.graph.contracts.PIPELINE_ORDERS`). A model whose inputs have no usable type
    gives none (the load kind has filed it already)."""
    import onnx
    from google.protobuf.message import DecodeError

    from seedzer.load.onnx_import import InvalidModel, input_specs
    from seedzer.passes.graph.contracts import PIPELINE_ORDERS

    try:
        proto = onnx.load(str(model), load_external_data=False)
        specs, _ = input_specs(proto, model.name)
    except (OSError, ValueError, InvalidModel, DecodeError):
        return []
    text = GraphSeed(str(model.resolve()), tuple(spec.as_tuple() for spec in specs)).to_text()
    sequences = [[], *(orders if orders is not None else PIPELINE_ORDERS).values()]
    return [CorpusEntry(entry_id(NAME, text, seq), text, passes_to_json(seq), model.name, None, GRAPH_OP,
                        level=NAME) for seq in sequences]


class GraphLevel:
    """A pool model (ONNX) with recorded model mutations and a Relax pass sequence (docs/design.md §11)."""

    name = NAME
    mutations = (frozenset(model_mutation_name(k) for k in MODEL_MUTATION_KINDS) | {SPECIAL_MUTATION}
                 | frozenset(mutator_names(RELAX_FAMILY)))

    def __init__(self) -> None:
        self.fuzzer = graph_fuzzer

    def seeds(self, loaded: ModelSeeds) -> list[CorpusEntry]:
        """The model's graph entries (:func:`graph_entries`) when it lowered and TVM imports it as it
        is (a graph test case imports the pool's file, never the constant-folded one)."""
        if not loaded.seeds or not loaded.imports_raw:
            return []
        return graph_entries(loaded.model)

    def api(self) -> LevelApi | None:
        """None: the level's figures of TVM's API are the importer's operators and its passes (their own
        tables)."""
        return None

    def check_entry(self, script: str, passes: str, models: Sequence[Path]) -> EntryFault | None:
        """A graph entry is a :class:`GraphSeed` document naming one of the pool's ``models`` (resolved
        paths; the manifest's containment: a file the pool lists, symlinks resolved); workers open it."""
        try:
            seed = GraphSeed.from_text(script)
        except ValueError as exc:
            return EntryFault(str(exc))
        named = Path(seed.model)
        if not named.is_absolute() or named.resolve() not in set(models):
            return EntryFault(f"names the model {seed.model!r}, which is not one of the campaign's pool models")
        return None


LEVEL = GraphLevel()
"""The registry's entry (:data:`seedzer.level_table.LEVELS`)."""
