"""The folder of a graph finding: every file name it has, written when it is filed and read back
(:class:`GraphFinding`).

A graph finding folder holds:

=========================  ==========================================================================
``meta.json``              :class:`~seedzer.finding.meta.FindingMeta` (kind ``graph``; ``failing_model``:
                           what ``model.onnx`` is, its opset, and what else the failure needs)
``case.json``              the :class:`~seedzer.kernel.graph.case.GraphCase` (JSON) with the failure as
                           its expected observation and ``model_file`` = ``seed.onnx``: the kernel builds
                           the failing model from the seed and the recorded model mutations
``seed.onnx``              the seed: the pool model the case mutated (byte for byte)
``model.onnx``             the model that fails: the seed with the case's model mutations applied (the
                           seed itself when there are none), declaring the opset it needs; written when
                           the finding is filed without model mutations, else by the gate for a bug
``passes.json``            the Relax pass sequence, one ``{"pass", "args", "label"}`` object a line
``repro.py``               :func:`seedzer.finding.repro.render` of the case (the seed embedded when at
                           most :data:`EMBED_LIMIT` bytes, else read from ``seed.onnx`` beside it)
``log.txt``                the failure's message and traceback
``reduced/seed.onnx``      after ``seedzer triage``: the reduced seed, ``reduced/model.onnx`` the reduced
``reduced/model.onnx``     failing model, and beside them ``case.json``, ``passes.json`` and ``repro.py``
``reduced/case.json``      of the reduced case, and ``state.json`` (the reduction's resumable state);
``reduced/passes.json``    ``report.md`` in the folder itself
``reduced/repro.py``
=========================  ==========================================================================

Folders of older versions hold the seed as ``model.onnx`` (their ``case.json`` names it): they are read
as they are, and a verdict written into one first moves the seed to ``seed.onnx``.

The filing gate's verdict rewrites ``case.json``, ``passes.json`` and ``repro.py`` from the minimal
case it confirmed (:func:`write_case`), so the filed reproducer starts from the shortest sequence, and
writes the model that minimal case fails on as ``model.onnx`` (:class:`FailingCase`).
Its name is the raw signature :func:`graph_signature`. Nothing here imports TVM or onnx: the
campaign process calls :func:`graph_files`.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from seedzer.errors import SeedzerError
from seedzer.finding.layout import FAILING_MODEL, META_FILE, REDUCED_DIR, REPRO_FILE, SEED_MODEL, STATE_FILE
from seedzer.finding.meta import FindingMeta, ModelRecord
from seedzer.finding.repro import render
from seedzer.kernel.common import Observation, Symptom
from seedzer.kernel.graph.case import GraphCase, GraphPass
from seedzer.kernel.messages import key_line
from seedzer.oracles.signature import raw_key
from seedzer.seed import PassSpec
from seedzer.store.atomic import write_atomic

KIND_NAME = "graph"
"""The ``kind`` of a graph finding's ``meta.json``."""
SALT = KIND_NAME
"""What graph signatures hash as their kind (its name, unchanged since its first findings)."""
KERNEL = ("onnx.inputs+onnx.runtime+onnx.validity+onnx.conditioning+onnx.model+onnx.undefined+graph.case"
          "+graph.model_mutations+graph.insertion+graph.mutant+graph.inputs+graph.feeds+graph.special+graph.relax_build"
          "+graph.relax_consistency+graph.relax_mutations+graph.memo+graph.observe")
NEEDS = "onnx onnxruntime numpy"
"""The kernel modules a graph ``repro.py`` carries, and what it needs from PyPI beside apache-tvm."""
CASE_FILE, PASSES_FILE, LOG_FILE = "case.json", "passes.json", "log.txt"
"""The graph kind's own files (the house's are in :mod:`seedzer.finding.layout`)."""
MODEL_FILE, SEED_FILE = FAILING_MODEL, SEED_MODEL
"""The model that fails and the seed (the pool model the case mutated), as the house names them."""
REDUCED_MODEL, REDUCED_CASE = f"{REDUCED_DIR}/{MODEL_FILE}", f"{REDUCED_DIR}/{CASE_FILE}"
REDUCED_SEED = f"{REDUCED_DIR}/{SEED_FILE}"
REDUCED_PASSES, REDUCED_REPRO = f"{REDUCED_DIR}/{PASSES_FILE}", f"{REDUCED_DIR}/{REPRO_FILE}"
REDUCED_STATE = f"{REDUCED_DIR}/{STATE_FILE}"
"""The reduction's files, relative to the folder."""
EMBED_LIMIT = 1 << 20
"""Models up to this many bytes are embedded in ``repro.py``; a larger one is read from beside it."""


def graph_signature(observation: Observation, passes: tuple[GraphPass, ...] = ()) -> str:
    """The raw signature of a graph finding (the name of its folder): the symptom where it surfaced,
    its normalized message, and for a mismatch the passes of the sequence."""
    return raw_key(SALT, observation, changed_passes=[p.name for p in passes]).digest()


@dataclass(frozen=True)
class FailingCase:
    """A graph bug's minimal case (its seed left in the folder) with the model it fails on (the bytes of
    ``model.onnx``) and that model's record (``meta.json``'s ``failing_model``): what the gate hands the
    folder (:func:`write_case`)."""

    case: GraphCase
    model: bytes
    record: ModelRecord


def stored(case: GraphCase, expected: Observation | None = None) -> GraphCase:
    """``case`` as ``case.json`` holds it: its seed in ``seed.onnx`` beside it, ``expected`` (when
    given) its expected failure."""
    return dataclasses.replace(case, model=None, model_file=SEED_FILE, expected=expected or case.expected)


def passes_text(passes: tuple[GraphPass, ...]) -> str:
    """``passes.json``: the sequence as a JSON list, one pass a line, each with its readable label."""
    lines = [json.dumps({**p.to_json(), "label": p.label()}, sort_keys=True) for p in passes]
    return "[\n" + ",\n".join(" " + ln for ln in lines) + ("\n" if lines else "") + "]\n"


def read_passes(text: str) -> tuple[GraphPass, ...]:
    """The sequence ``passes.json`` holds (inverse of :func:`passes_text`)."""
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError("passes.json is not a JSON list")
    return tuple(GraphPass.from_json(p) for p in data)


def title_of(expected: Observation) -> str:
    """A one-line title of a graph failure: symptom, where, the identifying line of its message."""
    if expected.symptom is Symptom.OK:
        return "no failure"
    return f"{expected.symptom.value} at {expected.where()}: {key_line(expected.message)}"[:200]


def repro_text(case: GraphCase, model: bytes, signature: str = "", about: str = "") -> str:
    """The standalone ``repro.py`` of a graph case (with its expected failure): its seed ``model`` embedded
    when it is at most :data:`EMBED_LIMIT` bytes, else read from ``seed.onnx`` beside it."""
    big = None
    if len(model) <= EMBED_LIMIT:
        data = case.with_model(model).to_json()
        big = {"model": "MODEL"}
    else:
        data = stored(case).to_json()
    expected = case.expected or Observation.ok()
    about = about or "Passes: " + (", ".join(p.label() for p in case.passes) or "none")
    return render(KERNEL, NEEDS, data, title=title_of(expected), about=about, finding=signature, big=big)


def graph_log(observation: Observation, log: str = "") -> str:
    """The text of ``log.txt``: the failure's message, then the worker's log."""
    return observation.message + ("\n\n" + log if log else "") + "\n"


def graph_files(case: GraphCase, meta: FindingMeta, model: bytes, log: str) -> dict[str, str | bytes]:
    """The files of a new graph finding folder (beside the ``meta.json`` the house writes): the case
    (its expected failure ``meta.observation`` unless it has one), the seed ``model``, the failing model
    when the case has no model mutation (the seed itself: with mutations, the gate writes it), the pass
    list, the reproducer and ``log`` (:func:`graph_log`)."""
    case = stored(case, case.expected or meta.observation)
    files: dict[str, str | bytes] = {
        CASE_FILE: json.dumps(case.to_json(), indent=1),
        SEED_FILE: model,
        PASSES_FILE: passes_text(case.passes),
        REPRO_FILE: repro_text(case, model, meta.signature),
        LOG_FILE: log,
    }
    if not case.model_mutations:
        files[MODEL_FILE] = model
    return files


def read_case(path: Path) -> GraphCase:
    """The :class:`GraphCase` a ``case.json`` holds; a missing or unreadable one is a one-line error."""
    try:
        data = json.loads(Path(path).read_text())
        return GraphCase.from_json(data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SeedzerError(f"{path}: not a graph case ({exc})") from exc


def finding_case(folder: Path) -> GraphCase:
    """The case of the graph finding in ``folder``, its seed embedded (ready to run; ``seed.onnx``, or
    ``model.onnx`` in a folder of an older Seedzer, as ``case.json`` names it) and its expected failure
    the one ``meta.json`` records when ``case.json`` has none."""
    folder = Path(folder)
    case = read_case(folder / CASE_FILE)
    if case.model is None:
        name = case.model_file or MODEL_FILE
        path = folder / Path(name).name
        if not path.is_file():
            raise SeedzerError(f"{folder}: the graph finding's seed model {name} is missing")
        case = case.with_model(path.read_bytes())
    if case.expected is None and (folder / META_FILE).is_file():
        case = dataclasses.replace(case, expected=FindingMeta.load(folder).observation)
    return case


def model_of(case: GraphCase, folder: Path) -> bytes:
    """The bytes of ``case``'s seed model: embedded, else its file in ``folder``."""
    if case.model is not None:
        return base64.b64decode(case.model)
    return (Path(folder) / Path(case.model_file or MODEL_FILE).name).read_bytes()


def write_case(folder: Path, meta: FindingMeta, case: GraphCase, failing: FailingCase | None = None) -> None:
    """Rewrite the folder's ``case.json``, ``passes.json`` and ``repro.py`` from ``case`` (the minimal
    case the gate confirmed; ``seed.onnx`` too when it carries its seed) and, with ``failing``, the
    failing model (``model.onnx``) and its record (``meta.failing_model``). A folder of an older
    Seedzer, whose ``model.onnx`` is the seed, gets its ``seed.onnx`` first."""
    folder = Path(folder)
    seed = model_of(case, folder) if case.model is not None else \
        model_of(read_case(folder / CASE_FILE), folder)
    if case.model is not None or not (folder / SEED_FILE).is_file():
        write_atomic(folder / SEED_FILE, seed)
    case = stored(case, case.expected or meta.observation)
    write_atomic(folder / CASE_FILE, json.dumps(case.to_json(), indent=1))
    write_atomic(folder / PASSES_FILE, passes_text(case.passes))
    write_atomic(folder / REPRO_FILE, repro_text(case, seed, meta.signature))
    if failing is not None:
        write_atomic(folder / MODEL_FILE, failing.model)
        meta.failing_model = failing.record


@dataclass
class GraphFinding:
    """A graph finding folder's contents: ``meta.json``, the case (as ``case.json`` holds it, its seed
    in ``seed.onnx``), the seed's bytes and the log."""

    meta: FindingMeta
    case: GraphCase
    model: bytes
    log: str = ""

    def files(self) -> dict[str, str | bytes]:
        """The folder's files besides ``meta.json``."""
        return graph_files(self.case, self.meta, self.model, self.log)

    @staticmethod
    def load(folder: Path) -> GraphFinding:
        """Read a graph finding folder; a one-line :class:`SeedzerError` names what is wrong."""
        folder = Path(folder)
        case = finding_case(folder)
        try:
            log = (folder / LOG_FILE).read_text(errors="replace")
        except OSError:
            log = ""
        return GraphFinding(FindingMeta.load(folder), stored(case), model_of(case, folder), log)


def to_specs(passes: tuple[GraphPass, ...]) -> list[PassSpec]:
    """The sequence as :class:`seedzer.seed.PassSpec` objects (what the Relax contracts judge)."""
    return [PassSpec(p.name, tuple(sorted(p.args.items()))) for p in passes]
