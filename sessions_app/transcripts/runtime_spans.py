"""The runtime spans OTLP brought in (`RuntimeSpan`: compactions, approval reviews, judgements), read for the
conversation page: where each compaction falls in the transcript, each tool call's reviews and judgements, and the
calls a run ended waiting on for approval with what became of them."""

import json
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sessions_app.models import Conversation, Run, RuntimeSpan, Snapshot, Tenant, ToolEffect, TranscriptEntry
from sessions_app.models.store import MessageRole
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.run_timeline import ReviewFacts

MAX_MARKS = 500  # compactions marked on one page; a longer conversation's later ones are left out


@dataclass(frozen=True)
class Compaction:
    """A `compact_messages` span: the strategy and the live history's size before and after (tokens estimated
    by the harness), in run `run_id` at `started_at`."""

    pk: int
    run_id: str
    started_at: datetime
    strategy: str
    messages_before: int | None
    messages_after: int | None
    tokens_before: int | None
    tokens_after: int | None


def _count(facts: dict[str, Any], name: str) -> int | None:
    value = facts.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def compactions_by_position(conversation: Conversation) -> dict[int, list[Compaction]]:
    """Each compaction of the conversation's runs, under the transcript position it came after: the last message
    written at or before the compaction began (the request the model was about to get), else -1 (the start)."""
    tenant = conversation.tenant
    spans = list(
        scoped(RuntimeSpan, tenant)
        .filter(run__tenant=tenant, run__conversation=conversation, kind=RuntimeSpan.Kind.COMPACTION)
        .order_by("started_at", "pk")
        .values_list("pk", "run_id", "run__run_id", "started_at", "facts")[:MAX_MARKS]
    )
    if not spans:
        return {}
    # Times and positions of the transcript (any run's: a deployment sending snapshots and OTLP has the
    # compaction in OTLP's run and the messages around it in the snapshots' run), by time; `latest[i]` is the
    # highest position written at or before the i-th time.
    timed = sorted(
        (timestamp, position)
        for timestamp, position in scoped(TranscriptEntry, tenant)
        .filter(conversation=conversation, summary_artifact=False)
        .values_list("timestamp", "position")
        if timestamp is not None
    )
    latest: list[int] = []
    for _, position in timed:
        latest.append(max(position, latest[-1]) if latest else position)
    marks: dict[int, list[Compaction]] = {}
    for pk, _, run_id, started_at, facts in spans:
        before = bisect_right(timed, (started_at, 2**63))
        position = latest[before - 1] if before else -1
        facts = facts if isinstance(facts, dict) else {}
        marks.setdefault(position, []).append(
            Compaction(
                pk=pk,
                run_id=run_id,
                started_at=started_at,
                strategy=str(facts.get("strategy") or ""),
                messages_before=_count(facts, "messages_before"),
                messages_after=_count(facts, "messages_after"),
                tokens_before=_count(facts, "tokens_before"),
                tokens_after=_count(facts, "tokens_after"),
            )
        )
    return marks


def reviews_by_call(conversation: Conversation) -> dict[str, list[ReviewFacts]]:
    """The approval reviews and judgements of the conversation's tool calls, by tool-call id, in time order."""
    reviews: dict[str, list[ReviewFacts]] = {}
    rows = (
        scoped(RuntimeSpan, conversation.tenant)
        .filter(
            run__tenant=conversation.tenant,
            run__conversation=conversation,
            kind__in=[RuntimeSpan.Kind.APPROVAL_REVIEW, RuntimeSpan.Kind.JUDGE],
        )
        .order_by("started_at", "pk")
        .values_list("kind", "started_at", "ended_at", "facts")
    )
    for kind, started_at, ended_at, facts in rows:
        facts = facts if isinstance(facts, dict) else {}
        decision = facts.get("decision" if kind == RuntimeSpan.Kind.APPROVAL_REVIEW else "verdict")
        confidence = facts.get("confidence")
        reviews.setdefault(str(facts.get("tool_call_id") or ""), []).append(
            ReviewFacts(
                kind=kind,
                decision=str(decision or ""),
                confidence=float(confidence) if isinstance(confidence, int | float) else None,
                model_result=str(facts.get("model_result") or ""),
                started_at=started_at,
                ended_at=ended_at,
            )
        )
    return reviews


AWAITING_APPROVAL = "awaiting approval"


@dataclass(frozen=True)
class Approval:
    """A call the run ended waiting on (DeferredToolRequests), and what became of it: `awaiting approval` until
    a later run of the conversation answers it, then `approved` (the tool ran) or `denied` (its return says so,
    pydantic-ai's `outcome='denied'`)."""

    tool_name: str
    tool_call_id: str
    waiting_since: datetime
    wait: str  # "approval" (a requires_approval tool) or "external" (a call run outside the agent)
    state: str = AWAITING_APPROVAL
    decided_in_run: str = ""
    decided_at: datetime | None = None


def _decision(message: Any, tool_call_id: str, ran: bool | None) -> str:
    """How the answer in `message` decided the call: pydantic-ai marks a denial `outcome='denied'` on the
    return, which the snapshots keep; OTLP's GenAI shape drops it, but only an approved call runs, so a run
    with a ledger (`ran`: whether the call is in it; None without a ledger) tells the two apart. Without either
    a return counts as approved."""
    for part in message.get("parts") or () if isinstance(message, dict) else ():
        if isinstance(part, dict) and part.get("tool_call_id") == tool_call_id:
            if part.get("part_kind") == "retry-prompt" or part.get("outcome") == "denied":
                return "denied"
            if part.get("part_kind") == "tool-return":
                return "denied" if ran is False else "approved"
    return ""


@dataclass(frozen=True)
class Answer:
    """A tool result (or retry prompt) for call `tool_call_id` in run `run_pk`, with its message as JSON."""

    tool_call_id: str
    run_pk: int
    run_id: str
    run_started_at: datetime
    timestamp: datetime | None
    message: Any


ANSWER_KINDS = ("tool-return", "retry-prompt")


def store_decisions(tenant: Tenant, conversation_ids: Iterable[int], answers: Sequence[Answer]) -> set[int]:
    """Decide, once, the still-undecided pending calls of these conversations that `answers` answer, storing the
    decision in the pending span's facts (`state`, `decided_in_run`, `decided_at`); returns the pks of the runs
    that waited on them. One bounded query finds the pending spans: the answers' call ids, these conversations."""
    by_call: dict[str, list[Answer]] = {}
    for answer in answers:
        by_call.setdefault(answer.tool_call_id, []).append(answer)
    if not by_call:
        return set()
    spans = list(
        scoped(RuntimeSpan, tenant)
        .select_related("run")
        .filter(
            run__tenant=tenant,
            run__conversation_id__in=set(conversation_ids),
            kind=RuntimeSpan.Kind.APPROVAL_PENDING,
            facts__tool_call_id__in=sorted(by_call),
        )
        .exclude(facts__has_key="state")
        .order_by("started_at", "pk")
    )
    matched = [
        (
            span,
            [
                a
                for a in by_call[str(span.facts["tool_call_id"])]
                if a.run_pk != span.run_id and a.run_started_at >= span.run.started_at
            ],
        )
        for span in spans
    ]
    runs = {a.run_pk for _, found in matched for a in found}
    if not runs:
        return set()
    ledgers: dict[int, set[str]] = {}
    for run_pk, call_id in scoped(ToolEffect, tenant).filter(run__in=runs).values_list("run_id", "tool_call_id"):
        ledgers.setdefault(run_pk, set()).add(call_id)
    traced = set(scoped(Snapshot, tenant).filter(run__in=runs, via="otlp").values_list("run_id", flat=True))
    decided: list[RuntimeSpan] = []
    for span, found in matched:
        for answer in sorted(found, key=lambda a: (a.run_started_at, a.timestamp or a.run_started_at)):
            # A run that came in over OTLP records every call that ran (its tool spans), so no ledger is no run.
            ran = (
                answer.tool_call_id in ledgers.get(answer.run_pk, set())
                if answer.run_pk in ledgers or answer.run_pk in traced
                else None
            )
            if state := _decision(answer.message, answer.tool_call_id, ran):
                span.facts = {
                    **span.facts,
                    "state": state,
                    "decided_in_run": answer.run_id,
                    "decided_at": answer.timestamp.isoformat() if answer.timestamp else None,
                }
                decided.append(span)
                break
    RuntimeSpan.objects.filter(tenant=tenant).bulk_update(decided, ["facts"])
    return {span.run_id for span in decided}


def answers_in_history(run: Run) -> list[Answer]:
    """Every answer a later run of the run's conversation holds to the run's pending calls, from the stored
    transcript: the once-only scan for a pending span that arrived after its answer (and the backfill)."""
    tenant = run.tenant
    calls = {
        str(facts.get("tool_call_id"))
        for facts in scoped(RuntimeSpan, tenant)
        .filter(run=run, kind=RuntimeSpan.Kind.APPROVAL_PENDING)
        .values_list("facts", flat=True)
        if isinstance(facts, dict) and facts.get("tool_call_id")
    }
    if not calls:
        return []
    rows = (
        scoped(TranscriptEntry, tenant)
        .filter(
            conversation_id=run.conversation_id,
            role=MessageRole.TOOL_RESULT,
            run__tenant=tenant,
            run__started_at__gte=run.started_at,
            message__tenant=tenant,
        )
        .exclude(run=run)
        .order_by("position")
        .values_list("facts", "run_id", "run__run_id", "run__started_at", "timestamp", "message__data")
    )
    return [
        Answer(call_id, run_pk, run_id, started_at, timestamp, json.loads(data))
        for facts, run_pk, run_id, started_at, timestamp, data in rows
        for call_id in sorted(
            ({str(p.get("tool_call_id")) for p in facts.get("parts", ())} if isinstance(facts, dict) else set()) & calls
        )
    ]


def approvals_of(run: Run) -> list[Approval]:
    """The run's pending calls, each with the decision stored when the answering run arrived (none: awaiting)."""
    pending = list(
        scoped(RuntimeSpan, run.tenant)
        .filter(run=run, kind=RuntimeSpan.Kind.APPROVAL_PENDING)
        .order_by("started_at", "pk")
        .values_list("started_at", "facts")
    )
    approvals: dict[str, Approval] = {}
    for since, facts in pending:
        if not isinstance(facts, dict) or not facts.get("tool_call_id"):
            continue
        decided_at = facts.get("decided_at")
        approvals[str(facts["tool_call_id"])] = Approval(
            tool_name=str(facts.get("tool") or ""),
            tool_call_id=str(facts.get("tool_call_id")),
            waiting_since=since,
            wait=str(facts.get("wait") or "approval"),
            state=str(facts.get("state") or AWAITING_APPROVAL),
            decided_in_run=str(facts.get("decided_in_run") or ""),
            decided_at=datetime.fromisoformat(decided_at) if isinstance(decided_at, str) else None,
        )
    return list(approvals.values())
