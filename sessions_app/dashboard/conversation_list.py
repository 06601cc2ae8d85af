"""The conversation list: filters that only narrow a tenant's conversations, and keyset pagination.

Keyset (seek) pagination keeps every page as cheap as the first at 100k conversations: the cursor carries the
last row's sort value and id, and the next page starts strictly after it on the (tenant, sort key, id) index.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.core.cache import cache
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils.text import Truncator

from sessions_app.audit import run_verdicts
from sessions_app.audit.vocabulary import verdict_rank
from sessions_app.core import paging
from sessions_app.dashboard.ids import conversation_url
from sessions_app.dashboard.latency import duration_text
from sessions_app.models import Conversation, Run, Tenant
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.masking import masker_for
from sessions_app.transcripts.prices import format_cost

PAGE_SIZE = 50


@dataclass(frozen=True)
class Sort:
    field: str
    descending: bool
    label: str


# Every sort is on a column kept at ingest (sessions_app.transcripts.list_columns), never on an aggregate.
SORTS: dict[str, Sort] = {
    "recent": Sort("last_activity_at", True, "Most recent activity"),
    "oldest": Sort("last_activity_at", False, "Oldest activity"),
    # Its label says no "verdict": the Verdict filter is found by its label, which holds its options' text.
    "worst": Sort("worst_verdict_rank", False, "Gravest first"),
    "largest": Sort("message_count", True, "Most messages"),
    "turns": Sort("turn_count", True, "Most turns"),
    "tool_calls": Sort("tool_call_count", True, "Most tool calls"),
    "tokens": Sort("total_tokens", True, "Most tokens"),
    "cost": Sort("cost_micro_usd", True, "Highest cost"),
    "duration": Sort("duration_ms", True, "Longest duration"),
}


@dataclass(frozen=True)
class Range:
    """A numeric filter on one list column: `low` and `high` both included, None for open."""

    column: str
    low: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class ConversationFilters:
    """The list's filters, each only narrowing: a run state, an agent, a verdict, repaired runs only, a time range
    (`until` exclusive) a run of the conversation started in (of the agent, when one is named: what the overview
    counts), numeric ranges on the list columns, and the conversations a ranked search found."""

    state: str = ""
    agent: str = ""
    verdict: str = ""
    has_repairs: bool = False
    since: datetime | None = None
    until: datetime | None = None
    ranges: tuple[Range, ...] = ()
    conversation_ids: Sequence[int] | None = None  # from a ranked search: only these


def filtered_conversations(tenant: Tenant, filters: ConversationFilters) -> QuerySet[Conversation]:
    """The tenant's conversations narrowed by `filters` (every clause only narrows; none widens)."""
    qs = scoped(Conversation, tenant)
    runs = scoped(Run, tenant).filter(conversation=OuterRef("pk"))
    if filters.state:
        qs = qs.filter(Exists(runs.filter(state=filters.state)))
    # One meaning of dates (B2/B9): the runs' own start times, as the overview counts them, so a drill-down
    # from the overview lands on as many conversations as it counted.
    dated = runs
    if filters.agent:
        dated = dated.filter(agent_name=filters.agent)
    if filters.since:
        dated = dated.filter(started_at__gte=filters.since)
    if filters.until:
        dated = dated.filter(started_at__lt=filters.until)
    if filters.agent or filters.since or filters.until:
        qs = qs.filter(Exists(dated))
    for bound in filters.ranges:
        if bound.low is not None:
            qs = qs.filter(**{f"{bound.column}__gte": bound.low})
        if bound.high is not None:
            qs = qs.filter(**{f"{bound.column}__lte": bound.high})
    if filters.verdict or filters.has_repairs:
        qs = run_verdicts.narrow_conversations(qs, tenant, verdict=filters.verdict, has_repairs=filters.has_repairs)
    if filters.conversation_ids is not None:
        qs = qs.filter(pk__in=list(filters.conversation_ids))
    return qs


@dataclass
class Page:
    conversations: list[Conversation]
    next_cursor: str | None


def page_after(qs: QuerySet[Conversation], sort: Sort, cursor: str | None, limit: int | None = None) -> Page:
    """One page of `qs` in `sort` order, starting after `cursor`; paging.BadCursor for a cursor not of ours."""
    limit = limit or PAGE_SIZE
    if cursor:
        value, pk = paging.decode_key(cursor, dated=sort.field.endswith("_at"))
        # The plain bound (<= / >=) lets the database walk the (tenant, key, id) index from the cursor on;
        # the OR alone made PostgreSQL filter a whole index scan (300 ms at 50,000 rows in, versus 2 ms).
        if sort.descending:
            qs = qs.filter(Q(**{f"{sort.field}__lte": value}))
            qs = qs.filter(Q(**{f"{sort.field}__lt": value}) | Q(**{sort.field: value, "pk__lt": pk}))
        else:
            qs = qs.filter(Q(**{f"{sort.field}__gte": value}))
            qs = qs.filter(Q(**{f"{sort.field}__gt": value}) | Q(**{sort.field: value, "pk__gt": pk}))
    prefix = "-" if sort.descending else ""
    rows = list(qs.order_by(f"{prefix}{sort.field}", f"{prefix}pk")[: limit + 1])
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        next_cursor = paging.encode_key(getattr(last, sort.field), last.pk)
    return Page(rows, next_cursor)


@dataclass
class ConversationRow:
    """One row of the list: the kept columns of its conversation, formatted once, and its page's run facts."""

    conversation: Conversation
    url: str = ""
    updated_iso: str = ""
    updated_label: str = ""
    preview: str = ""
    tokens_label: str = ""
    cost_label: str = ""
    duration_label: str = ""
    run_count: int = 0
    agents: list[str] = field(default_factory=list)
    states: list[str] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)  # worst first
    last_started_at: datetime | None = None


PREVIEW_SHOWN = 120


def describe(tenant: Tenant, conversations: Sequence[Conversation]) -> list[ConversationRow]:
    """Per-row run facts for one page, in one query over that page's runs (not one per row)."""
    mask = masker_for(tenant)
    # URL and dates formatted here, once, in plain Python: per-row {% url %} and |date cost ~1 ms a row.
    rows = {
        c.pk: ConversationRow(
            c,
            url=conversation_url(c.external_id),
            updated_iso=c.last_activity_at.isoformat(),
            updated_label=c.last_activity_at.strftime("%Y-%m-%d %H:%M"),
            # Masked before it is cut: a credential cut in two would not be recognised.
            preview=Truncator(mask(c.first_user_text)).chars(PREVIEW_SHOWN),
            tokens_label=f"{c.total_tokens:,}",
            cost_label=format_cost(c.cost_micro_usd, c.unpriced_steps, c.model_step_count),
            duration_label=duration_text(c.duration_ms),
        )
        for c in conversations
    }
    runs = (
        scoped(Run, tenant)
        .filter(conversation_id__in=list(rows))
        .order_by("started_at", "pk")
        .values_list("conversation_id", "agent_name", "state", "started_at", "pk")
    )
    run_conversation: dict[int, int] = {}
    for conversation_id, agent, state, started_at, run_pk in runs:
        row = rows[conversation_id]
        row.run_count += 1
        run_conversation[run_pk] = conversation_id
        if agent and agent not in row.agents:
            row.agents.append(agent)
        if state not in row.states:
            row.states.append(state)
        row.last_started_at = started_at
    for run_pk, verdict in run_verdicts.verdicts_for_runs(tenant, list(run_conversation)).items():
        row = rows[run_conversation[run_pk]]
        if verdict not in row.verdicts:
            row.verdicts.append(verdict)
    for row in rows.values():
        row.verdicts.sort(key=verdict_rank)  # the worst first (B3: not in run order)
    return list(rows.values())


AGENT_NAMES_TTL = 300


def agent_names(tenant: Tenant) -> list[str]:
    """The tenant's agent names for the filter's suggestions, cached for a few minutes.

    A DISTINCT over every run of a large tenant costs ~150 ms; suggestions a few minutes stale cost nothing.
    """
    key = f"sessiondesk:agent-names:{tenant.pk}"
    names: list[str] | None = cache.get(key)
    if names is None:
        names = list(
            scoped(Run, tenant)
            .exclude(agent_name="")
            .order_by("agent_name")
            .values_list("agent_name", flat=True)
            .distinct()[:200]
        )
        cache.set(key, names, AGENT_NAMES_TTL)
    return names
