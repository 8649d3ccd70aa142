"""The gate's tester: runs kernel cases in children forked from the gate's process (which holds TVM
and a parse cache); a death or a timeout becomes a crash or hang observation."""

from __future__ import annotations

from typing import Any

from seedzer.execute.forked import SharedProgress, call_forked
from seedzer.kernel.common import Case, Observation, Stage, Symptom


def _runner() -> Any:
    """The kernel's runner with a parse cache (filled in the gate process, inherited by its children).

    The kernel imports TVM: it is imported here, in the gate's own process, never by the campaign."""
    from seedzer.kernel.lowlevel import Runner, parse_func

    class CachedParse(Runner):
        def __init__(self) -> None:
            super().__init__()
            self.parsed: dict[str, Any] = {}

        def parse(self, script: str) -> Any:
            if script not in self.parsed:
                self.parsed[script] = parse_func(script)
            return self.parsed[script]

    return CachedParse()


class Tester:
    """Runs cases in forked children; a death or a timeout becomes a crash or hang observation."""

    __test__ = False  # not a pytest class

    def __init__(self) -> None:
        self.runner = _runner()
        self.progress = SharedProgress()
        self.tests = 0

    def observe(self, case: Case, timeout: float) -> Observation:
        """What ``case`` shows when run alone within ``timeout`` seconds."""
        from seedzer.kernel.lowlevel import observe, step_label

        self.tests += 1
        try:
            self.runner.parse(case.script)
        except Exception as exc:  # unparsable script: the child would fail the same way
            return Observation(Symptom.INVALID, Stage.MUTATE, None, f"unusable test case: {exc}")
        progress = self.progress

        def on_step(stage: Stage, name: str, program: str) -> None:
            progress.set(stage.value, step_label(name, program))

        self.runner.on_step = on_step
        res = call_forked(observe, case, self.runner, timeout=timeout, progress=progress)
        stage = Stage(res.stage) if res.stage in {s.value for s in Stage} else None
        if res.ok:
            return res.value  # type: ignore[no-any-return]
        if res.timed_out:
            phase = "kernel" if stage is Stage.RUN else "compile"
            return Observation(Symptom.HANG, stage, res.step, f"{stage.value if stage else 'start'} stage ran over "
                               f"{timeout:.0f}s alone (the {phase} is slow)", seconds=res.seconds)
        if res.signal is not None:
            return Observation(Symptom.CRASH, stage, res.step, res.describe(), signal=res.signal)
        return Observation(Symptom.INVALID, stage, res.step, f"the gate's child failed: {res.describe()}")
