"""The graph level in a worker: Relax pass-sequence and model mutation of a pool model, and the graph kernel's run.

A graph-level corpus entry is a :class:`~seedzer.levels.graph.entry.GraphSeed` (the model, its input specs, its
model mutations and its input mode) with a Relax step sequence. :class:`GraphFuzzer` mutates the sequence
with the sequence mutators of the Relax family (:mod:`seedzer.mutate.sequence`,
:mod:`seedzer.passes.graph.family`), adds a model mutation
(:mod:`seedzer.mutate.graph.model_mutators`: MT-DLComp's UOC and PIOC, spec-edge changes;
:mod:`seedzer.mutate.graph.insertion`: an operator of TVM's importer, those this worker has not exercised yet
first) or switches the entry to special input values, the strategy drawn by the ``graph`` weights of the
configuration; it reports the operator types of every model it imports as features ``onnx-op/<type>``
(what ``status`` counts against the importer's operators) and the passes each case ran, fuzzed and
in ``tvm.compile``'s pipeline, with those that changed the module
(:mod:`seedzer.coverage.triggers`; TVM's default build of the seed model, the reference, apart).
It plans the sequence under the Relax pass contracts (:func:`seedzer.passes.graph.contracts.plan_relax`:
a pass is only run where its contract allows), makes the kernel's
:class:`~seedzer.kernel.graph.case.GraphCase` and runs it with
:func:`~seedzer.kernel.graph.observe.observe_graph`, keeping imported modules and TVM's default outputs per
model across cases, and the build of a module equal to one built before
(:class:`~seedzer.levels.graph.build_reuse.ReusingMemo`). Imports TVM and onnx: only workers
import this module.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable

import onnx
import tvm

from seedzer.coverage.collectors import Collector
from seedzer.coverage.triggers import PassTriggers, TriggerInstrument
from seedzer.execute.records import ExecResult, FuzzTask
from seedzer.kernel.common import OPT, Observation, Stage
from seedzer.kernel.graph.case import SPECIAL_INPUTS, WELL_FORMED, GraphCase, GraphPass
from seedzer.kernel.graph.inputs import bounded_inputs
from seedzer.kernel.graph.insertion import added_inputs
from seedzer.kernel.graph.mutant import apply_model_mutations
from seedzer.kernel.graph.observe import observe_graph
from seedzer.kernel.messages import normalize
from seedzer.kernel.onnx.model import Trace, random_inputs
from seedzer.levels.graph.build_reuse import ReusingMemo
from seedzer.levels.graph.codegen_reuse import CodegenReuse
from seedzer.levels.graph.entry import SPECIAL_MUTATION, GraphSeed, model_mutation_name
from seedzer.levels.graph.fold_builds import FoldBuilds
from seedzer.levels.graph.settings import GraphSettings
from seedzer.load.importer_ops import OPERATOR_FEATURE, importer_operators
from seedzer.mutate.graph.insertion import sample_insertion
from seedzer.mutate.graph.model_mutators import sample_model_mutation
from seedzer.mutate.sequence import sequence_mutators
from seedzer.mutate.weighted import group_factor, scaled
from seedzer.passes.graph.contracts import exact_sequence, placeable_relax
from seedzer.passes.graph.family import RELAX_FAMILY
from seedzer.seed import passes_from_json, passes_to_json

OnStage = Callable[[Stage, str, str], None]
"""The worker's progress callback: ``(stage, step, program)``."""
EntryMutation = Callable[[GraphSeed, str, random.Random], "tuple[GraphSeed, str] | None"]
"""A change of a graph entry (its model mutations or its inputs) by one strategy: the changed entry and its name."""
TIMING_KEYS = {Stage.PASS: "passes", Stage.BUILD: "build", Stage.RUN: "run", Stage.COMPARE: "compare",
               Stage.LOAD: "import"}
"""The campaign's timing name of each stage of a graph case (the default pipeline's are ``reference``)."""


STEPS, SPECIAL = "passes", "special"
"""The mutation strategies (``levels.graph``'s weights) that are not model mutations: Relax steps, special inputs."""


def graph_timings(timings: dict[str, float], stages: dict[str, Stage]) -> dict[str, float]:
    """A graph case's seconds by the campaign's stage names: the fuzzed program's stages, and
    ``reference`` for TVM's default pipeline (steps labelled ``<default>:...``)."""
    out: dict[str, float] = {}
    for step, seconds in timings.items():
        key = "reference" if step.startswith("<") else TIMING_KEYS.get(stages.get(step, Stage.LOAD), "import")
        out[key] = out.get(key, 0.0) + seconds
    return out


def llvm_target(opt_level: int) -> str:
    """The target a graph case builds for, as JSON text (what ``tvm.target.Target`` and a reproducer's
    ``tvm.compile`` take): LLVM at ``opt_level`` (``levels.graph.llvm_opt_level``)."""
    return json.dumps({"kind": "llvm", "opt-level": int(opt_level)})


class GraphFuzzer:
    """Mutation and execution of graph-level test cases in one worker (see the module docstring)."""

    def __init__(self, progress: OnStage, collector: Collector | None, config: GraphSettings | None = None) -> None:
        self.progress = progress
        self.collector = collector
        self.config = config or GraphSettings()
        self.mutators = sequence_mutators(RELAX_FAMILY)
        self.models: dict[str, onnx.ModelProto] = {}
        """Seed models by path (a pool has tens of them)."""
        self.triggers = PassTriggers()
        """The passes the current test case ran and triggered (TVM's default build, cached per model, apart)."""
        self.memo = ReusingMemo(self.triggers)
        """What depends on the model alone, and the builds of fuzzed modules (reused for an equal module)."""
        self.step = ""
        """The step running (TVM's default build's are labelled ``<default>:...``)."""
        self.folds = FoldBuilds(self.triggers, self.in_case)
        """``FoldConstant``'s builds, reused for an equal PrimFunc once installed (a worker's are)."""
        self.codegen = CodegenReuse()
        """LLVM's code of host modules, reused for an equal module once installed (a worker's is)."""
        self.exercised: Counter[str] = Counter()
        """Operator types of the models this worker handed to TVM's importer, by test case."""
        self.entry_mutations: dict[str, EntryMutation] = {
            "uoc": self._model_mutation, "pioc": self._model_mutation, "edge": self._model_mutation,
            "insert": self._model_mutation, SPECIAL: self._special_inputs}
        """The mutations of an entry itself (not its steps), by the strategy ``graph``'s weights name."""

    def in_case(self) -> bool:
        """Whether the step running belongs to the test case (TVM's default build of the seed, the
        reference cached per model, does not): its passes are recorded."""
        return not self.step.startswith("<")

    def mutate(self, task: FuzzTask, rng: random.Random) -> tuple[str, str, list[str]]:
        """One mutation, its strategy drawn by the configured weights: a weighted Relax step mutator on the
        entry's sequence, a model mutation (UOC, PIOC, spec-edge, insertion) added to its model's, or
        special input values; an entry mutation that finds no site (or a model at
        ``max_model_mutations``) falls back to the steps."""
        factors = dict(task.mutation_factors)
        weights = self.strategy_weights(factors)
        strategy = rng.choices(list(weights), weights=list(weights.values()))[0]
        if strategy in self.entry_mutations:
            grown = self.entry_mutations[strategy](GraphSeed.from_text(task.script), strategy, rng)
            if grown is not None:
                return grown[0].to_text(), task.passes, [grown[1]]
        parent = passes_from_json(task.passes)
        other = passes_from_json(task.other_passes) if task.other_passes else None
        mutator = rng.choices(self.mutators, weights=scaled(self.mutators, factors))[0]
        return task.script, passes_to_json(mutator.mutate(parent, rng, other, task.triggered)), [mutator.name]

    def strategy_weights(self, factors: dict[str, float]) -> dict[str, float]:
        """The configured weights of the mutation strategies, each times the allocation's factor of the mutation
        it makes (the steps strategy: its Relax mutators' weighted mean factor)."""
        weights = self.config.weights()
        if not factors:
            return weights
        of_strategy = {strategy: factors.get(self.mutation_of_strategy(strategy), 1.0) for strategy in weights}
        if STEPS in of_strategy:
            of_strategy[STEPS] = group_factor(self.mutators, factors)
        return {strategy: w * of_strategy[strategy] for strategy, w in weights.items()}

    def mutation_of_strategy(self, strategy: str) -> str:
        """The mutation name an entry mutation of ``strategy`` makes (the steps strategy makes its mutator's)."""
        return SPECIAL_MUTATION if strategy == SPECIAL else model_mutation_name(strategy)

    def _model_mutation(self, seed: GraphSeed, strategy: str, rng: random.Random) -> tuple[GraphSeed, str] | None:
        """A ``strategy`` model mutation that fits the entry's model as mutated so far."""
        if len(seed.mutations) >= self.config.max_model_mutations:
            return None
        model = self.models.get(seed.model)
        if model is None:
            model = self.models[seed.model] = onnx.load(seed.model)
        feeds = {**random_inputs(seed.specs, seed.input_seed),
                 **bounded_inputs(added_inputs(seed.mutations), seed.input_seed, "random")}
        current = apply_model_mutations(model, seed.mutations, feeds) if seed.mutations else model
        if strategy == "insert":
            operators = list(importer_operators())
            weights = {op: 1.0 / (1 + self.exercised[op]) ** 2 for op in operators}
            added = sample_insertion(current, operators, rng, weights, feeds, isolate=True,
                                     input_seed=seed.input_seed)
        else:
            added = sample_model_mutation(current, strategy, rng, feeds, isolate=True)
        if added is None:
            return None
        grown = GraphSeed(seed.model, seed.specs, (*seed.mutations, added), seed.input_mode, seed.input_seed)
        return grown, model_mutation_name(strategy)

    def _special_inputs(self, seed: GraphSeed, strategy: str, rng: random.Random) -> tuple[GraphSeed, str] | None:
        """The entry with special input values (another draw of them when it has them already)."""
        return GraphSeed(seed.model, seed.specs, seed.mutations, SPECIAL_INPUTS, rng.getrandbits(31)), SPECIAL_MUTATION

    def case(self, script: str, passes_json: str) -> GraphCase:
        """The kernel case of a graph test case: the model file, its specs and the planned passes."""
        seed = GraphSeed.from_text(script)
        planned = [spec for _, spec in placeable_relax(passes_from_json(passes_json))]
        passes = tuple(GraphPass(spec.name, dict(spec.args)) for spec in planned)
        return GraphCase(seed.specs, passes, seed.mutations, model_file=seed.model, input_seed=seed.input_seed,
                         input_mode=seed.input_mode, target=llvm_target(self.config.llvm_opt_level),
                         exact=exact_sequence(planned))

    def execute(self, case: GraphCase, passes_json: str) -> ExecResult:
        """Run one graph case: its observation, coverage features (the native collector's, one per
        pass run and one per kind of error) and timings by stage."""
        stages: dict[str, Stage] = {}

        def on_stage(stage: Stage, step: str) -> None:
            stages[step] = stage
            self.step = step
            self.progress(stage, step, OPT)

        trace = Trace(on_stage=on_stage)
        self.triggers.clear()
        self.step = ""
        reused, folds, codegen = self.memo.reused, self.folds.hits, self.codegen.hits
        recorder = TriggerInstrument(self.triggers, self.in_case)
        with tvm.transform.PassContext(instruments=[recorder]):  # the default context's options, observed
            observation = observe_graph(case, trace, self.memo)
        features = {f"graph/{step}" for step in trace.reached if step.startswith("relax.")
                    and not step.endswith(WELL_FORMED)}
        err = graph_error_feature(observation)
        if err is not None:
            features.add(err)
        features.update(OPERATOR_FEATURE + op for op in trace.operators)
        self.exercised.update(trace.operators)
        if self.collector is not None:
            features.update(self.collector.take())
        kept = {i for i, _ in placeable_relax(passes_from_json(passes_json))}
        dropped = sorted(set(range(len(passes_from_json(passes_json)))) - kept)
        timings = graph_timings(trace.timings, stages)
        if self.memo.reused > reused:
            timings["reused_builds"] = float(self.memo.reused - reused)
        if self.folds.hits > folds:
            timings["reused_folds"] = float(self.folds.hits - folds)
        if self.codegen.hits > codegen:
            timings["reused_codegen"] = float(self.codegen.hits - codegen)
        return ExecResult(observation, sorted(features), dropped, timings,
                          passes_ran=sorted(self.triggers.ran), passes_triggered=self.triggers.triggered())


def graph_error_feature(observation: Observation) -> str | None:
    """A coverage feature for a graph case's failure (a new kind of failure is new behaviour)."""
    if observation.symptom.value in ("ok", "mismatch"):
        return None
    return f"err/graph/{observation.stage}/{observation.pass_name}/{normalize(observation.message)[:80]}"
