"""Benchmark the schedule level's core: generate, apply, build, run and compare sched test cases.

Usage::

    python benchmarks/sched_throughput.py SEEDS [--cases 200] [--seed 0] [--no-memo] [--debug-mask all|0]
                                          [--chain 4] [--out DIR]

``SEEDS`` is a folder of PrimFunc scripts as the loader makes them (``seedzer load POOL --out DIR``
writes ``DIR/seeds/*.py``; ``tests/fixtures/seeds`` works too). Standalone, no campaign: one process
runs ``--cases`` test cases, each a mutant made by the schedule generator
(:mod:`seedzer.mutate.sched.generator`) from a plan of the same PrimFunc (a chain of up to
``--chain`` mutants from each function's MetaSchedule design space, keeping clean mutants as a
corpus would), run by the kernel (:func:`seedzer.kernel.sched.observe.observe`) with a memo of the
unscheduled builds unless ``--no-memo``. Each case runs in a child forked from the benchmark (as a
campaign's worker is: a crash of TVM is counted, not fatal; the unscheduled build is made in the
parent first so every child inherits the memo), or in the benchmark itself with ``--in-process``.
Prints test cases per second, the cost split (generation, schedule, build, run, compare; from the
kernel's progress callback; ``fork`` is the children's start and end), the symptoms, each way's
validity (share of its cases whose trace applies without a refusal) and the refusals per primitive.
``--out`` keeps every case that is not ``ok`` or ``invalid`` as ``<n>.json`` (a :class:`SchedCase`).
Figures are printed, never asserted.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from seedzer.execute.forked import call_forked
from seedzer.kernel.common import Observation, Stage, Symptom
from seedzer.kernel.sched.case import SchedCase, SchedChecks, SchedPlan
from seedzer.kernel.sched.observe import SchedBuilder, SchedMemo, observe
from seedzer.kernel.sched.trace import TRANSFORMING
from seedzer.kernel.tir.lowering import make_inputs, parse_func
from seedzer.mutate.sched.catalogue import primitives
from seedzer.mutate.sched.generator import SchedGenerator
from seedzer.seed import input_seed


class Clock:
    """Seconds by stage, from the kernel's progress callback (the time until the next step)."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self.current = "other"
        self.since = time.perf_counter()

    def tick(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[self.current] += now - self.since
        self.current, self.since = stage, now

    def on_step(self, stage: Stage, name: str, program: str) -> None:
        which = "scheduled" if program == "opt" else "reference"
        self.tick(stage.value if stage is not Stage.BUILD else f"build ({which})")


def _one(generator: SchedGenerator, func: Any, script: str, parent: SchedPlan, plans: list[SchedPlan], seed: int,
         builder: SchedBuilder, mask: str | int, out: Path | None) -> tuple[Any, Observation, dict[str, float], Any]:
    """One test case (in a forked child unless ``--in-process``): a mutant of ``parent`` and its
    observation, with the seconds by stage and the generator's counters."""
    clock = Clock()
    builder.on_step = clock.on_step
    clock.tick("generate")
    made = generator.mutate(func, parent, random.Random(seed), plans)
    observation = Observation.ok()
    if made is not None:
        case = SchedCase(script, made.plan.trace, input_seed(script), made.plan.postprocs,
                         checks=SchedChecks(debug_mask=mask))
        if out is not None:  # the case a crash leaves behind
            out.mkdir(parents=True, exist_ok=True)
            (out / "pending.json").write_text(json.dumps(case.to_json()))
        clock.tick("observe (parse, inputs)")
        observation = observe(case, builder)
    clock.tick("other")
    return made, observation, {k: v for k, v in clock.seconds.items() if k != "other"}, generator.stats


def scripts_of(folder: Path) -> list[str]:
    """Every PrimFunc script of ``folder`` (``seeds/*.py`` of a load output, or ``*.py``)."""
    paths = sorted((folder / "seeds").glob("*.py")) or sorted(folder.glob("*.py"))
    return [p.read_text() for p in paths]


@click.command()
@click.argument("seeds", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--cases", default=200, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--chain", default=4, show_default=True, help="Mutants in a chain before starting over.")
@click.option("--no-memo", is_flag=True, help="Build the unscheduled function for every case.")
@click.option("--debug-mask", default="all", show_default=True, help="Schedule consistency checks: all or 0.")
@click.option("--in-process", is_flag=True, help="Run cases in the benchmark's process (a TVM crash ends it).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None)
def main(seeds: Path, cases: int, seed: int, chain: int, no_memo: bool, debug_mask: str, in_process: bool,
         out: Path | None) -> None:
    console = Console()
    scripts = scripts_of(seeds)
    rng = random.Random(seed)
    clock = Clock()
    builder = SchedBuilder(clock.on_step, None if no_memo else SchedMemo())
    generator = SchedGenerator()
    mask: str | int = 0 if debug_mask == "0" else debug_mask
    symptoms: Counter[str] = Counter()
    by_way: dict[str, Counter[str]] = defaultdict(Counter)
    refusals: Counter[str] = Counter()
    findings = []
    crashes: list[Observation] = []
    exercised: Counter[str] = Counter()
    corpus: dict[int, list[SchedPlan]] = defaultdict(list)
    funcs = {}
    start = time.perf_counter()
    for n in range(cases):
        index = rng.randrange(len(scripts))
        script = scripts[index]
        clock.tick("generate")  # a function's first plan: MetaSchedule's design space
        if index not in funcs:
            funcs[index] = parse_func(script)
            corpus[index].append(generator.fresh(funcs[index], rng).plan)
        plans = corpus[index]
        parent = rng.choice(plans[-chain:])
        one_seed = rng.randrange(1 << 30)
        if in_process:
            clock.tick("harness")
            made, observation, seconds, stats = _one(generator, funcs[index], script, parent, plans, one_seed,
                                                     builder, mask, out)
            clock.tick("harness")
            clock.seconds["harness"] -= sum(seconds.values())
        else:
            clock.tick("build (reference)")  # in the parent, so that every child inherits it in the memo
            probe = SchedCase(script, [[], []], input_seed(script))
            builder.parse(script)
            builder.reference(probe, funcs[index], make_inputs(funcs[index], probe.input_seed, probe.max_elems))
            clock.tick("fork")
            if out is not None:
                (out / "pending.json").unlink(missing_ok=True)
            done = call_forked(_one, generator, funcs[index], script, parent, plans, one_seed, builder, mask, out,
                               timeout=300)
            if done.ok:
                made, observation, seconds, stats = done.value
            else:  # TVM died generating or running the case: out/pending.json holds the case if it got that far
                made, seconds, stats = None, {}, generator.stats
                observation = Observation(Symptom.HANG if done.timed_out else Symptom.CRASH, None, None,
                                          done.describe(), signal=done.signal)
                crashes.append(observation)
                if out is not None and (out / "pending.json").exists():
                    (out / "pending.json").rename(out / f"{n}.json")
            clock.tick("fork")
            clock.seconds["fork"] -= sum(seconds.values())
        clock.seconds.update(seconds)
        generator.stats = stats
        clock.tick("other")
        if made is None and not observation.symptom.is_bug:
            continue  # the generator made nothing
        symptoms[str(observation.symptom)] += 1
        way = made.mutations[0] if made is not None else "(died)"
        by_way[way][str(observation.symptom)] += 1
        if observation.stage is Stage.SCHEDULE and observation.symptom is Symptom.INVALID:
            refusals[observation.pass_name or "?"] += 1
        if observation.symptom is Symptom.OK and made is not None:
            plans.append(made.plan)
            exercised.update({i[0] for i in made.plan.trace[0]} & TRANSFORMING)
        if observation.symptom.is_bug:
            findings.append((n, observation))
            if out is not None and made is not None:
                case = SchedCase(script, made.plan.trace, input_seed(script), made.plan.postprocs, expected=observation)
                (out / f"{n}.json").write_text(json.dumps(case.to_json(), indent=1))
    wall = time.perf_counter() - start
    ran = sum(symptoms.values())
    console.print(f"{ran} test cases in {wall:.1f} s: [bold]{ran / wall:.2f} test cases/s[/bold] "
                  f"({len(scripts)} PrimFuncs, memo {'off' if no_memo else 'on'}, debug_mask {debug_mask})")
    split = Table("stage", "seconds", "share", "ms/case", title="Where the time goes")
    for stage, secs in clock.seconds.most_common():
        split.add_row(stage, f"{secs:.1f}", f"{100 * secs / wall:.0f}%", f"{1000 * secs / max(ran, 1):.1f}")
    console.print(split)
    ways = Table("way", "cases", "valid", *sorted(symptoms), title="Cases by way (valid: applies without a refusal)")
    for way, counts in sorted(by_way.items()):
        total = sum(counts.values())
        valid = total - counts.get("invalid", 0)
        ways.add_row(way, str(total), f"{100 * valid / total:.0f}%", *(str(counts.get(s, 0)) for s in sorted(symptoms)))
    console.print(ways)
    console.print("refusals by primitive:", dict(refusals.most_common()))
    api = {m.kind for m in primitives()}
    console.print(f"schedule primitives exercised (in a trace that ran clean): {len(set(exercised) & api)} of "
                  f"{len(api)}; not: {sorted(api - set(exercised))}")
    drawn = generator.stats.drawn
    rates = {k: f"{refusals[k]}/{drawn[k]}" for k in sorted(drawn)}
    console.print("refused/drawn by primitive:", rates)
    console.print("generator:", json.dumps(generator.stats.as_dict())[:3000])
    for n, observation in findings:
        console.print(f"  case {n}: {observation.headline()[:200]}")


if __name__ == "__main__":
    main()
