"""How much of TVM's API a level exercised: "schedule primitives exercised N of M", each operation's test
cases, acceptances, refusals and failures, and the generators used (``status``, the end-of-campaign summary;
the experiment report reads :func:`api_uses` per trial).

M is the API the level recorded when the campaign started (:mod:`seedzer.store.api_rows`). Per operation:
the test cases that called it and those in which it accepted its arguments (``pass_triggers``: a sched
test case reports the primitives it called as passes run, those that accepted as passes triggered), the
test cases it refused (``filter_summary``, reason ``refused``: TVM's ``ScheduleError`` and argument
checks) and the failures filed at it (candidates whose failure happened in it, every occurrence). An
operation called but never accepted is a generator gap to fix or explain. TVM-free.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rich.console import Group

from seedzer.console import SafeTable
from seedzer.store.api_rows import LevelApi
from seedzer.store.reader import CampaignReader

REFUSED = "refused"
"""The filter reason of a test case an operation refused (:func:`seedzer.kernel.common.invalid_class`)."""
SCHEDULE_STAGE = "schedule"
"""The stage of a failure inside an operation (its finding's stage)."""
MOST_NAMES = 12
"""Names a headline lists before ``(+n)``."""


@dataclass(frozen=True)
class ApiUse:
    """One operation of a level's API in one campaign."""

    operation: str
    in_api: bool
    """Whether the recorded API has it (a postprocessor, or an operation of another TVM, has not)."""
    called: int
    accepted: int
    refused: int
    failures: int

    @property
    def refusal_rate(self) -> float | None:
        """Refused test cases per test case calling it (None: never called)."""
        return self.refused / self.called if self.called else None


@dataclass(frozen=True)
class ApiReport:
    """A level's API and what the campaign made of it."""

    api: LevelApi
    uses: tuple[ApiUse, ...]
    generators_used: tuple[tuple[str, int], ...]
    """Each generator of :attr:`LevelApi.generators` with the mutants it made, in the API's order."""

    @property
    def exercised(self) -> list[str]:
        """The API's operations some test case called."""
        return [u.operation for u in self.uses if u.in_api and u.called]

    @property
    def accepted(self) -> list[str]:
        """The API's operations that accepted their arguments at least once."""
        return [u.operation for u in self.uses if u.in_api and u.accepted]

    def headline(self) -> str:
        """``<label> exercised N of M (accepted at least once: K)``."""
        return (f"{self.api.label} exercised {len(self.exercised)} of {len(self.api.operations)} "
                f"(accepted at least once: {len(self.accepted)})")


def api_uses(reader: CampaignReader) -> list[ApiReport]:
    """Every level's report whose campaign recorded its API (none for a campaign from before the record)."""
    apis = reader.level_apis()
    if not apis:
        return []
    passes = {(c.level, c.pass_name): c for c in reader.pass_trigger_counts()}
    refused: Counter[tuple[str, str]] = Counter()
    for f in reader.filter_counts():
        if f.reason == REFUSED:
            refused[(f.level, f.pass_name)] += f.count
    failures: Counter[tuple[str, str]] = Counter()
    for row in reader.findings():
        if row.stage == SCHEDULE_STAGE and row.pass_name:
            failures[(row.kind, row.pass_name)] += row.count
    made: Counter[str] = Counter()
    for m in reader.mutation_counts():
        made[m.mutation] += m.count
    reports = []
    for api in apis:
        names = list(api.operations) + sorted({p for (lvl, p) in passes if lvl == api.level} - set(api.operations))
        uses = []
        for name in names:
            counted = passes.get((api.level, name))
            uses.append(ApiUse(name, name in api.operations, counted.ran if counted else 0,
                               counted.triggered if counted else 0, refused[(api.level, name)],
                               failures[(api.level, name)]))
        reports.append(ApiReport(api, tuple(uses), tuple((g, made[g]) for g in api.generators)))
    return reports


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MOST_NAMES])
    return (shown + (f" (+{len(names) - MOST_NAMES})" if len(names) > MOST_NAMES else "")) or "none"


def _rate(use: ApiUse) -> str:
    rate = use.refusal_rate
    return "" if rate is None else f"{100 * rate:.0f}%"


def api_table(report: ApiReport) -> Group:
    """The headline, the operations never called and always refused, the generators used, and one row per
    operation (the API's, then others the test cases called, such as postprocessors)."""
    api = report.api
    never = [u.operation for u in report.uses if u.in_api and not u.called]
    refused_always = [u.operation for u in report.uses if u.in_api and u.called and not u.accepted]
    lines = SafeTable(title=f"{api.level}: {report.headline()}", show_header=False)
    lines.add_column("what", style="bold")
    lines.add_column("names", overflow="fold")
    lines.add_row("never called", _names(never))
    lines.add_row("never accepted (a generator gap)", _names(refused_always))
    if api.generators:
        used = [f"{g} {n}" for g, n in report.generators_used if n]
        lines.add_row(f"{api.generators_label or 'generators'} used",
                      f"{len(used)} of {len(api.generators)}: " + _names(used))
    table = SafeTable(title=f"{api.level}: {api.label} (test cases)")
    for name in ("operation", "called", "accepted", "refused", "refusal rate", "failures filed"):
        table.add_column(name, justify="left" if name == "operation" else "right")
    for use in report.uses:
        if use.in_api or use.called:
            label = use.operation if use.in_api else f"{use.operation} (not counted in M)"
            table.add_row(label, str(use.called), str(use.accepted), str(use.refused), _rate(use),
                          str(use.failures))
    return Group(lines, table)


def api_tables(reader: CampaignReader) -> list[Group]:
    """:func:`api_table` of every level that recorded its API."""
    return [api_table(report) for report in api_uses(reader)]

