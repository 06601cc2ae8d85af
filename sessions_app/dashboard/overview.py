"""A tenant's activity over a range of days, aggregated in the database: runs per day by verdict, repaired runs,
interrupted tool calls, tokens and cost per day, the busiest agents with their cost, and latency percentiles (run
durations and model steps).

Everything is counted by the day a run started (UTC), so the charts agree with each other and with the
conversation list's dates. Each query starts from the tenant's runs in the range (the `run_tenant_started`
index), so its cost follows the runs in the range, not the tenant's whole history.
"""

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property

from django.db import connection
from django.db.models import (
    Aggregate,
    BigIntegerField,
    Count,
    FilteredRelation,
    FloatField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, TruncDate

from sessions_app.audit import gates
from sessions_app.audit.vocabulary import ALL_VERDICTS, EventClass, Verdict
from sessions_app.dashboard.bar_charts import BarChart, days_between, stacked_bars
from sessions_app.dashboard.latency import Percentiles, percentiles, step_latencies
from sessions_app.dashboard.overview_html import percent
from sessions_app.models import Conversation, Run, Tenant, TranscriptEntry
from sessions_app.models.audit import AuditEvent
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.prices import format_cost

NOT_AUDITED = "NOT AUDITED"
TOP_AGENTS = 10
TOKEN_KINDS = ("input", "output", "cache_read")


@dataclass
class Day:
    day: date
    runs_by_verdict: dict[str, int] = field(default_factory=dict)
    repaired: int = 0
    interrupted: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KINDS, 0))
    cost_micro_usd: int = 0
    unpriced_steps: int = 0
    model_steps: int = 0

    @property
    def cost(self) -> str:
        return format_cost(self.cost_micro_usd, self.unpriced_steps, self.model_steps) if self.model_steps else "—"

    @property
    def runs(self) -> int:
        return sum(self.runs_by_verdict.values())

    @property
    def repair_rate(self) -> float | None:
        return self.repaired / self.runs if self.runs else None

    @property
    def iso(self) -> str:
        return self.day.isoformat()


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[tuple[str, list[float | str]]]


@dataclass(frozen=True)
class Agent:
    name: str
    runs: int
    repaired: int
    conversations: int  # what its drill-down to the list lands on
    cost_micro_usd: int = 0
    unpriced_steps: int = 0
    model_steps: int = 0

    @property
    def cost(self) -> str:
        return format_cost(self.cost_micro_usd, self.unpriced_steps, self.model_steps) if self.model_steps else "—"


@dataclass(frozen=True)
class ModelLatency:
    model: str
    steps: Percentiles


@dataclass(frozen=True)
class Overview:
    first: date
    last: date
    days: list[Day]
    verdicts: list[str]  # those present in the range, in the audit's priority order
    agents: list[Agent]
    interrupted_tools: list[tuple[str, int]]  # tool name, interrupted calls; the most first
    run_durations: Percentiles = field(default_factory=lambda: percentiles([]))  # milliseconds
    step_latencies: Percentiles = field(default_factory=lambda: percentiles([]))  # milliseconds
    model_latencies: list[ModelLatency] = field(default_factory=list)  # the most steps first
    has_data: bool = True  # the tenant has stored anything at all (else the page shows how to start)

    @property
    def cost(self) -> str:
        steps = sum(day.model_steps for day in self.days)
        unpriced = sum(day.unpriced_steps for day in self.days)
        return format_cost(sum(day.cost_micro_usd for day in self.days), unpriced, steps) if steps else "—"

    @property
    def costs_table(self) -> Table:
        return Table(
            ["Day", "Runs", "Model steps", "Unpriced steps", "Cost"],
            [(d.iso, [d.runs, d.model_steps, d.unpriced_steps, d.cost]) for d in self.days],
        )

    @cached_property
    def cost_chart(self) -> BarChart:
        # Priced steps only (in US dollars); unpriced ones are counted beside the chart, never drawn as $0.
        return self._chart([("cost", [day.cost_micro_usd / 1_000_000 for day in self.days])])

    @property
    def runs(self) -> int:
        return sum(day.runs for day in self.days)

    @property
    def repaired(self) -> int:
        return sum(day.repaired for day in self.days)

    @property
    def interrupted(self) -> int:
        return sum(day.interrupted for day in self.days)

    @property
    def repair_rate(self) -> float | None:
        return self.repaired / self.runs if self.runs else None

    def tokens(self, kind: str) -> int:
        return sum(day.tokens[kind] for day in self.days)

    @property
    def token_totals(self) -> dict[str, int]:
        return {kind: self.tokens(kind) for kind in TOKEN_KINDS}

    def _chart(self, series: list[tuple[str, list[float]]]) -> BarChart:
        return stacked_bars([day.day for day in self.days], series)

    @cached_property
    def runs_chart(self) -> BarChart:
        return self._chart([(v, [day.runs_by_verdict.get(v, 0) for day in self.days]) for v in self.verdicts])

    @property
    def runs_table(self) -> Table:
        return Table(
            ["Day", *self.verdicts, "All"],
            [(d.iso, [*(d.runs_by_verdict.get(v, 0) for v in self.verdicts), d.runs]) for d in self.days],
        )

    @property
    def repairs_table(self) -> Table:
        return Table(
            ["Day", "Runs", "Repaired", "Rate"],
            [(d.iso, [d.runs, d.repaired, percent(d.repair_rate)]) for d in self.days],
        )

    @property
    def interrupted_table(self) -> Table:
        return Table(["Day", "Interrupted calls"], [(d.iso, [d.interrupted]) for d in self.days])

    @property
    def tokens_table(self) -> Table:
        return Table(
            ["Day", "Input", "Output", "Cache read"], [(d.iso, [d.tokens[k] for k in TOKEN_KINDS]) for d in self.days]
        )

    @cached_property
    def repairs_chart(self) -> BarChart:
        return self._chart(
            [
                ("not repaired", [day.runs - day.repaired for day in self.days]),
                ("repaired", [day.repaired for day in self.days]),
            ]
        )

    @cached_property
    def interrupted_chart(self) -> BarChart:
        return self._chart([("interrupted", [day.interrupted for day in self.days])])

    @cached_property
    def tokens_chart(self) -> BarChart:
        return self._chart([(kind, [day.tokens[kind] for day in self.days]) for kind in TOKEN_KINDS])


def _token_sum(key: str) -> Sum:
    return Sum(Cast(KT(f"facts__usage__{key}_tokens"), BigIntegerField()))


def tenant_overview(tenant: Tenant, first: date, last: date) -> Overview:
    """The tenant's runs started from `first` to `last` (both included, UTC days), in five queries."""
    start = datetime.combine(first, time.min, tzinfo=UTC)
    end = datetime.combine(last + timedelta(days=1), time.min, tzinfo=UTC)
    runs: QuerySet[Run] = scoped(Run, tenant).filter(started_at__gte=start, started_at__lt=end)
    days = {day: Day(day) for day in days_between(first, last)}
    # The verdict is joined on the tenant too (in the LEFT JOIN's ON): Citus plans a join of two distributed
    # tables only within one tenant, and PostgreSQL then reads one partition of each.
    runs_with_verdict = runs.annotate(tenant_verdict=FilteredRelation("verdict", condition=Q(verdict__tenant=tenant)))
    repaired = Q(tenant_verdict__repair_count__gt=0)

    for verdict_row in (
        runs_with_verdict.annotate(day=TruncDate("started_at", tzinfo=UTC))
        .values("day", "tenant_verdict__verdict")
        .annotate(
            n=Count("id"),
            repaired=Count("id", filter=repaired),
            cost=Sum("cost_micro_usd"),
            unpriced=Sum("unpriced_steps"),
            steps=Sum("model_step_count"),
        )
        .order_by()
    ):
        bucket = days[verdict_row["day"]]
        bucket.cost_micro_usd += verdict_row["cost"] or 0
        bucket.unpriced_steps += verdict_row["unpriced"] or 0
        bucket.model_steps += verdict_row["steps"] or 0
        verdict = verdict_row["tenant_verdict__verdict"] or NOT_AUDITED
        bucket.runs_by_verdict[verdict] = bucket.runs_by_verdict.get(verdict, 0) + verdict_row["n"]
        bucket.repaired += verdict_row["repaired"]

    # An interrupted call is recorded once per run (the finding's key), under the run's id.
    run_day = Subquery(
        scoped(Run, tenant)
        .filter(run_id=OuterRef("run_id"))
        .annotate(day=TruncDate("started_at", tzinfo=UTC))
        .values("day")[:1]
    )
    for event_row in (
        scoped(AuditEvent, tenant)
        .filter(event_class=EventClass.INTERRUPTED_SYNTHESIZED, run_id__in=runs.values("run_id"))
        .annotate(day=run_day)
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
    ):
        days[event_row["day"]].interrupted = event_row["n"]

    token_rows = (
        scoped(TranscriptEntry, tenant)
        .filter(run__in=runs, summary_artifact=False)
        .annotate(day=TruncDate("run__started_at", tzinfo=UTC))
        .values("day")
        .annotate(input=_token_sum("input"), output=_token_sum("output"), cache_read=_token_sum("cache_read"))
        .order_by()
    )
    for row in token_rows:
        days[row["day"]].tokens = {
            "input": row["input"] or 0,
            "output": row["output"] or 0,
            "cache_read": row["cache_read"] or 0,
        }

    agents = [
        Agent(
            row["agent_name"],
            row["n"],
            row["repaired"],
            row["conversations"],
            row["cost"] or 0,
            row["unpriced"] or 0,
            row["steps"] or 0,
        )
        for row in runs_with_verdict.values("agent_name")
        .annotate(
            n=Count("id"),
            repaired=Count("id", filter=repaired),
            conversations=Count("conversation", distinct=True),
            cost=Sum("cost_micro_usd"),
            unpriced=Sum("unpriced_steps"),
            steps=Sum("model_step_count"),
        )
        .order_by("-n", "agent_name")[:TOP_AGENTS]
    ]
    # Which tools were interrupted: the findings of the range's repaired runs only (few; the list is JSON).
    tools: Counter[str] = Counter()
    for findings in runs_with_verdict.filter(repaired).values_list("tenant_verdict__findings", flat=True):
        tools.update(
            f.get("tool_name") or "(unnamed)"
            for f in findings or ()
            if f.get("gate") == gates.TOOL_PAIRING and f.get("code") == Verdict.INTERRUPTED_TOOL
        )
    present = {verdict for day in days.values() for verdict in day.runs_by_verdict}
    verdicts = [v for v in (*ALL_VERDICTS, NOT_AUDITED) if v in present]
    interrupted_tools = sorted(tools.items(), key=lambda item: (-item[1], item[0]))[:TOP_AGENTS]
    steps = step_latencies(
        scoped(TranscriptEntry, tenant)
        .filter(run__in=runs, summary_artifact=False)
        .order_by("conversation_id", "position")
        .values_list("conversation_id", "facts")
        .iterator(chunk_size=2000)
    )
    by_model: dict[str, list[float]] = {}
    for model, ms in steps:
        by_model.setdefault(model or "(unnamed)", []).append(ms)
    model_latencies = sorted(
        (ModelLatency(model, percentiles(values)) for model, values in by_model.items()),
        key=lambda row: (-row.steps.count, row.model),
    )[:TOP_AGENTS]
    return Overview(
        first,
        last,
        list(days.values()),
        verdicts,
        agents,
        interrupted_tools,
        run_durations=_run_duration_percentiles(runs),
        step_latencies=percentiles([ms for _, ms in steps]),
        model_latencies=model_latencies,
        has_data=bool(present) or scoped(Conversation, tenant).exists(),
    )


class _PercentileCont(Aggregate):
    """PostgreSQL's ordered-set aggregate: the percentile over the rows' values, interpolated."""

    template = "PERCENTILE_CONT(%(fraction)s) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()

    def __init__(self, expression: str, fraction: float) -> None:
        super().__init__(expression, fraction=fraction)


def _run_duration_percentiles(runs: QuerySet[Run]) -> Percentiles:
    """p50 and p95 of the range's run durations: in the database on PostgreSQL; elsewhere (SQLite has no
    percentile aggregate) over the range's durations alone, so the cost follows the range, not the history."""
    if connection.vendor == "postgresql":
        row = runs.aggregate(
            n=Count("id"), p50=_PercentileCont("duration_ms", 0.5), p95=_PercentileCont("duration_ms", 0.95)
        )
        return Percentiles(row["n"], row["p50"], row["p95"])
    return percentiles([float(ms) for ms in runs.values_list("duration_ms", flat=True)])
