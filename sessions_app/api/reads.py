"""What the read doors answer (the JSON API's read endpoints and the MCP server's tools), written once.

Every function takes the API key that authenticated the call and answers the JSON the API answers, so a
tool result is the API's answer byte for byte: the same tenant scoping (`tenancy.scoping`), the same redaction
(search's), the same client-key limits (replay readiness goes through `replay_history`, which answers a client
key's question about history it did not write like a missing conversation). Refused input raises
`RejectedInput` (400, or 404 for what is missing or another tenant's).
"""

import json
from collections import Counter
from typing import Any, ClassVar, Literal

from pydantic import Field

from input_errors import RejectedInput
from search_app.context import read_context
from search_app.service import run_search
from sessions_app.api.search_params import (
    AwareTime,
    ContextParams,
    SearchParams,
    WholeNumber,
    _Params,
    time_problem,
    whole_number_problem,
)
from sessions_app.audit import run_verdicts, service
from sessions_app.audit.events import list_audit_events, record_event
from sessions_app.audit.ledger import effect_outcome
from sessions_app.audit.listing import EVENT_FIELDS
from sessions_app.audit.replay import replay_history
from sessions_app.audit.vocabulary import EventClass, Verdict, verdict_rank
from sessions_app.core import paging
from sessions_app.dashboard.conversation_list import SORTS, ConversationFilters, filtered_conversations, page_after
from sessions_app.dashboard.filter_urls import view_conversations
from sessions_app.models import ApiKey, Conversation, Run, RunState, Snapshot, ToolEffect, TranscriptEntry
from sessions_app.models.store import MessageRole
from sessions_app.tenancy.scoping import conversations_readable_by, scoped
from sessions_app.transcripts.masking import masker_for
from sessions_app.transcripts.runtime_spans import approvals_of
from sessions_app.transcripts.snapshots import diff_between, previous_snapshot

MAX_LIST_LIMIT = 100
UNKNOWN_CONVERSATION = "No conversation '{}'."


def _choice(name: str, values: tuple[str, ...]) -> Any:
    return lambda _name, _field, raw: f"Unknown {name} {str(raw)[:40]!r}: use one of {', '.join(values)}."


def _too_long(name: str, field: Any, raw: object) -> str:
    return f"'{name}' is {len(str(raw))} characters long; an id or name is at most 200."


# How the lists' shared parameters are refused (a model reads only the names it has).
_PAGE_PROBLEMS: dict[str, Any] = {
    "since": time_problem,
    "until": time_problem,
    "limit": whole_number_problem,
    "cursor": lambda name, field, raw: paging.BAD_CURSOR,
}


class ConversationListParams(_Params):
    """GET /api/v1/conversations: filters that only narrow, newest activity first by default."""

    state: Literal["running", "complete", "interrupted"] | None = Field(None, description="A run of it in this state")
    agent: str | None = Field(None, max_length=200, description="A run of it by this agent")
    verdict: Verdict | None = Field(None, description="A run of it with this audit verdict")
    has_repairs: bool = Field(False, description="Only conversations with a repaired run")
    since: AwareTime | None = Field(None, description="Last activity at or after")
    until: AwareTime | None = Field(None, description="Last activity before")
    sort: Literal["recent", "oldest", "largest"] = "recent"
    limit: WholeNumber = Field(50, ge=1, le=MAX_LIST_LIMIT)
    cursor: str | None = Field(None, min_length=1, max_length=200, description="The previous page's next_cursor")
    view: str | None = Field(
        None, min_length=1, max_length=80, description="A saved view's name: its filters narrow too (sort is ours)"
    )

    PROBLEMS: ClassVar = {
        "state": _choice("state", tuple(RunState.values)),
        "verdict": _choice("verdict", tuple(Verdict)),
        "has_repairs": lambda name, field, raw: f"'{name}' must be true or false, got {str(raw)[:40]!r}.",
        "sort": _choice("sort", tuple(SORTS)),
        "agent": _too_long,
        "view": lambda name, field, raw: (
            f"'view' is {len(str(raw))} characters long; a saved view's name is at most 80."
        ),
        **_PAGE_PROBLEMS,
    }
    KEEP_EMPTY = ("cursor",)


class AuditEventParams(_Params):
    """GET /api/v1/audit-events: newest first, narrowed by class, run, conversation and time."""

    event_class: EventClass | None = Field(None, alias="class", description="One event class")
    run_id: str | None = Field(None, max_length=200)
    conversation_id: str | None = Field(None, max_length=200)
    since: AwareTime | None = Field(None, description="Observed at or after")
    until: AwareTime | None = Field(None, description="Observed before")
    limit: WholeNumber = Field(50, ge=1, le=MAX_LIST_LIMIT)
    cursor: str | None = Field(None, min_length=1, max_length=20, description="The previous page's next_cursor")

    PROBLEMS: ClassVar = {
        "class": _choice("class", tuple(EventClass)),
        "run_id": _too_long,
        "conversation_id": _too_long,
        **_PAGE_PROBLEMS,
    }
    KEEP_EMPTY = ("cursor",)


class TranscriptParams(_Params):
    """GET /api/v1/conversations/<id>/transcript: the recovered transcript in position order, a page at a time."""

    limit: WholeNumber = Field(100, ge=1, le=500)
    cursor: str | None = Field(None, min_length=1, max_length=20, description="The previous page's next_cursor")

    PROBLEMS: ClassVar = _PAGE_PROBLEMS
    KEEP_EMPTY = ("cursor",)


class SnapshotListParams(_Params):
    """GET /api/v1/runs/<id>/snapshots: the run's snapshots in write order (`seq`), a page at a time."""

    limit: WholeNumber = Field(50, ge=1, le=MAX_LIST_LIMIT)
    cursor: str | None = Field(None, min_length=1, max_length=20, description="The previous page's next_cursor")

    PROBLEMS: ClassVar = _PAGE_PROBLEMS
    KEEP_EMPTY = ("cursor",)


MAX_SEQ = 2**31 - 1


class SnapshotDiffParams(_Params):
    """GET /api/v1/runs/<id>/snapshots/diff: what changed from snapshot `from` to snapshot `to` of one run."""

    to_seq: WholeNumber = Field(alias="to", ge=0, le=MAX_SEQ, description="The later snapshot's seq")
    from_seq: WholeNumber | None = Field(
        None, alias="from", ge=0, le=MAX_SEQ, description="The earlier snapshot's seq (default: the one before `to`)"
    )

    PROBLEMS: ClassVar = {"to": whole_number_problem, "from": whole_number_problem}


def _cursor_id(cursor: str | None) -> int | None:
    try:
        return paging.decode_id(cursor)
    except paging.BadCursor as error:
        raise RejectedInput(str(error)) from None


def search(key: ApiKey, params: SearchParams) -> dict[str, Any]:
    return run_search(tenant=key.tenant, api_key=key, **params.model_dump()).as_dict()


def context(key: ApiKey, conversation_id: str | None, params: ContextParams) -> dict[str, Any]:
    return read_context(
        tenant=key.tenant, conversation_id=conversation_id, api_key=key, **params.model_dump()
    ).as_dict()


def _triage(key: ApiKey, conversations: list[Conversation]) -> list[dict[str, Any]]:
    """The list's triage columns for one page, in three queries over that page's rows (never one per row)."""
    tenant = key.tenant
    ids = [c.pk for c in conversations]
    runs: dict[int, list[Run]] = {pk: [] for pk in ids}
    for run in scoped(Run, tenant).filter(conversation_id__in=ids).order_by("started_at", "pk"):
        runs[run.conversation_id].append(run)
    verdicts = run_verdicts.verdicts_for_runs(tenant, [run.pk for rows in runs.values() for run in rows])
    roles: Counter[tuple[int, str]] = Counter()
    tokens: Counter[int] = Counter()
    entries = scoped(TranscriptEntry, tenant).filter(conversation_id__in=ids, summary_artifact=False)
    for conversation_pk, role, facts in entries.values_list("conversation_id", "role", "facts"):
        roles[conversation_pk, role] += 1
        usage = facts.get("usage") if isinstance(facts, dict) else None
        if isinstance(usage, dict):
            tokens[conversation_pk] += sum(
                value for name in ("input_tokens", "output_tokens") if isinstance(value := usage.get(name), int)
            )
    answers = []
    for conversation in conversations:
        own = runs[conversation.pk]
        own_verdicts = [verdicts[run.pk] for run in own if run.pk in verdicts]
        answers.append(
            {
                "conversation_id": conversation.external_id,
                "messages": conversation.message_count,
                "runs": len(own),
                "turns": roles[conversation.pk, MessageRole.USER],
                "tool_calls": roles[conversation.pk, MessageRole.TOOL_CALL],
                "tokens": tokens[conversation.pk],
                "last_activity": conversation.updated_at.isoformat(),
                "agents": sorted({run.agent_name for run in own if run.agent_name}),
                "states": sorted({run.state for run in own}),
                "worst_verdict": min(own_verdicts, key=verdict_rank) if own_verdicts else None,
            }
        )
    return answers


def list_conversations(key: ApiKey, params: ConversationListParams) -> dict[str, Any]:
    filters = ConversationFilters(
        state=params.state or "",
        agent=params.agent or "",
        verdict=params.verdict or "",
        has_repairs=params.has_repairs,
        since=params.since,
        until=params.until,
    )
    try:
        conversations = filtered_conversations(key.tenant, filters)
        if params.view:
            conversations = conversations.filter(pk__in=view_conversations(key.tenant, params.view).values("pk"))
        if (readable := conversations_readable_by(key)) is not None:
            conversations = conversations.filter(pk__in=readable)
        page = page_after(conversations, SORTS[params.sort], params.cursor, params.limit)
    except paging.BadCursor as error:
        raise RejectedInput(str(error)) from None
    return {"conversations": _triage(key, page.conversations), "next_cursor": page.next_cursor}


def _conversation(key: ApiKey, conversation_id: str) -> Conversation:
    conversations = scoped(Conversation, key.tenant).filter(external_id=conversation_id)
    if (readable := conversations_readable_by(key)) is not None:
        conversations = conversations.filter(pk__in=readable)
    conversation = conversations.first()
    if conversation is None:
        raise RejectedInput(UNKNOWN_CONVERSATION.format(conversation_id[:200]), status=404)
    return conversation


def get_conversation(key: ApiKey, conversation_id: str) -> dict[str, Any]:
    conversation = _conversation(key, conversation_id)
    (row,) = _triage(key, [conversation])
    runs = scoped(Run, key.tenant).filter(conversation=conversation).order_by("started_at", "pk")
    verdicts = run_verdicts.verdicts_for_runs(key.tenant, [run.pk for run in runs])
    row["run_list"] = [
        {
            "run_id": run.run_id,
            "agent": run.agent_name,
            "parent_run_id": run.parent_run_id or None,
            "state": run.state,
            "source": run.source,
            "started_at": run.started_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "verdict": verdicts.get(run.pk),
        }
        for run in runs
    ]
    return row


def get_run(key: ApiKey, run_id: str) -> dict[str, Any]:
    """A run with its snapshots (no content), its tool-effect ledger (each effect's outcome judged) and the calls
    it ended waiting on for approval (awaiting approval, approved or denied)."""
    run = service.get_run(key.tenant, run_id, key)
    snapshots = scoped(Snapshot, key.tenant).filter(run=run).defer("message_ids").order_by("seq")
    effects = scoped(ToolEffect, key.tenant).filter(run=run).order_by("started_at", "pk")
    return {
        "run_id": run.run_id,
        "conversation_id": run.conversation.external_id,
        "agent": run.agent_name,
        "parent_run_id": run.parent_run_id or None,
        "state": run.state,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "snapshots": [_snapshot_row(s) for s in snapshots],
        "tool_effects": [
            {
                "tool_call_id": e.tool_call_id,
                "tool_name": e.tool_name,
                "status": e.status,
                "outcome": effect_outcome(e.status, e.ended_at is not None, run.state),
                "started_at": e.started_at.isoformat() if e.started_at else None,
                "ended_at": e.ended_at.isoformat() if e.ended_at else None,
            }
            for e in effects
        ],
        "approvals": [
            {
                "tool_name": a.tool_name,
                "tool_call_id": a.tool_call_id,
                "wait": a.wait,
                "state": a.state,
                "waiting_since": a.waiting_since.isoformat(),
                "decided_in_run": a.decided_in_run or None,
                "decided_at": a.decided_at.isoformat() if a.decided_at else None,
            }
            for a in approvals_of(run)
        ],
    }


def _snapshot_row(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "seq": snapshot.seq,
        "step": snapshot.step,
        "state": snapshot.state,
        "via": snapshot.via,
        "messages": snapshot.message_count,
        "received_at": snapshot.received_at.isoformat(),
    }


def run_snapshots(key: ApiKey, run_id: str, params: SnapshotListParams) -> dict[str, Any]:
    """A page of the run's snapshots (no content; GET …/snapshots/diff shows what changed between two)."""
    run = service.get_run(key.tenant, run_id, key)
    after = _cursor_id(params.cursor)
    rows = list(
        scoped(Snapshot, key.tenant)
        .filter(run=run, seq__gt=after if after is not None else -1)
        .defer("message_ids")
        .order_by("seq")[: params.limit + 1]
    )
    shown = rows[: params.limit]
    return {
        "run_id": run.run_id,
        "snapshots": [_snapshot_row(s) for s in shown],
        "next_cursor": str(shown[-1].seq) if len(rows) > params.limit else None,
    }


def _run_snapshot(run: Run, seq: int) -> Snapshot:
    snapshot = scoped(Snapshot, run.tenant).filter(run=run, seq=seq).first()
    if snapshot is None:
        raise RejectedInput(f"Run '{run.run_id}' has no snapshot {seq}.", status=404)
    return snapshot


def snapshot_diff(key: ApiKey, run_id: str, params: SnapshotDiffParams) -> dict[str, Any]:
    """What changed from one snapshot of a run to another: kept runs of messages as counts and position ranges,
    removed and added messages with their role and text (masked as search masks it). Without `from`, the
    snapshot before `to` (the first against the empty history)."""
    run = service.get_run(key.tenant, run_id, key)
    after = _run_snapshot(run, params.to_seq)
    if params.from_seq is None:
        before = previous_snapshot(run, after.seq)
    elif params.from_seq == params.to_seq:
        raise RejectedInput("'from' and 'to' name the same snapshot; give two different ones.")
    else:
        before = _run_snapshot(run, params.from_seq)
    diff = diff_between(before, after, masker_for(key.tenant))
    rows: list[dict[str, Any]] = []
    for row in diff.rows:
        answer: dict[str, Any] = {"change": row.change, "count": row.count}
        if row.change == "kept":
            answer |= {"from_position": row.messages[0].position, "to_position": row.messages[-1].position}
        else:
            answer["messages"] = [
                {"position": m.position, "role": m.role, "text": m.text, "summary": m.summary} for m in row.messages
            ]
        rows.append(answer)
    return {
        "run_id": run.run_id,
        "from": _snapshot_row(before) if before else None,
        "to": _snapshot_row(after),
        "kept": diff.kept,
        "removed": diff.removed,
        "added": diff.added,
        "compacted": diff.compacted,
        "summary_added": diff.summary_added,
        "rows": rows,
    }


def run_verdict(key: ApiKey, run_id: str) -> dict[str, Any]:
    return service.audit_report(service.get_run(key.tenant, run_id, key)).as_dict()


def replay_readiness(key: ApiKey, conversation_id: str, principal: str | None) -> dict[str, Any]:
    """Whether the conversation may be resumed now, and if not every finding with its guidance; the history
    itself is GET /api/v1/conversations/<id>/replay's to give. Recorded in the audit log like a replay request."""
    answer = replay_history(
        key.tenant, conversation_id, principal=principal, api_key=key, actor=f"api-key:{key.prefix}"
    )
    return {
        "conversation_id": answer.conversation_id,
        "run_id": answer.run_id,
        "verdict": answer.verdict,
        "ready": answer.allowed,
        "findings": answer.findings,
    }


def audit_events(key: ApiKey, params: AuditEventParams) -> dict[str, Any]:
    events = list_audit_events(
        key.tenant,
        event_classes=[params.event_class] if params.event_class else [],
        run_id=params.run_id or "",
        conversation_id=params.conversation_id or "",
        since=params.since,
        until=params.until,
        before_id=_cursor_id(params.cursor),
        limit=params.limit + 1,
    )
    shown = events[: params.limit]
    return {
        "events": [
            {"id": e.pk, **{name: getattr(e, name) for name in EVENT_FIELDS}, "observed_at": e.observed_at.isoformat()}
            for e in shown
        ],
        "next_cursor": str(shown[-1].pk) if len(events) > params.limit else None,
    }


def transcript(key: ApiKey, conversation_id: str, params: TranscriptParams) -> dict[str, Any]:
    """A page of the transcript as the export's JSON Lines rows (the stored message bytes, for reloading), so
    only a server key reads it, and each page is an export in the audit log."""
    conversation = _conversation(key, conversation_id)
    after = _cursor_id(params.cursor)
    entries = (
        scoped(TranscriptEntry, key.tenant)
        .filter(conversation=conversation, summary_artifact=False, message__tenant_id=key.tenant_id)
        .filter(position__gt=after if after is not None else -1)
        .order_by("position")
        .values_list("position", "run__run_id", "role", "timestamp", "message__data")[: params.limit + 1]
    )
    rows = list(entries)
    shown = rows[: params.limit]
    record_event(key.tenant, EventClass.EXPORT, actor=f"api-key:{key.prefix}", conversation_id=conversation.external_id)
    return {
        "conversation_id": conversation.external_id,
        "messages": [
            {
                "conversation_id": conversation.external_id,
                "position": position,
                "run_id": run_id,
                "role": role,
                "timestamp": timestamp.isoformat() if timestamp else None,
                "message": json.loads(data),
            }
            for position, run_id, role, timestamp, data in shown
        ],
        "next_cursor": str(shown[-1][0]) if len(rows) > params.limit else None,
    }
