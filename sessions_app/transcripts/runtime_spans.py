"""The runtime spans OTLP brought in (`RuntimeSpan`: compactions, approval reviews, judgements), read for the
conversation page: where each compaction falls in the transcript, each tool call's reviews and judgements, and the
calls a run ended waiting on for approval with what became of them."""

import json
from bisect import bisect_right
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sessions_app.models import Conversation, Run, RuntimeSpan, Snapshot, ToolEffect, TranscriptEntry
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


def approvals_of(run: Run) -> list[Approval]:
    """The run's pending calls, each resolved by the first answer a later run of its conversation holds."""
    tenant = run.tenant
    pending = list(
        scoped(RuntimeSpan, tenant)
        .filter(run=run, kind=RuntimeSpan.Kind.APPROVAL_PENDING)
        .order_by("started_at", "pk")
        .values_list("started_at", "facts")
    )
    if not pending:
        return []
    approvals = {
        str(facts.get("tool_call_id")): Approval(
            tool_name=str(facts.get("tool") or ""),
            tool_call_id=str(facts.get("tool_call_id")),
            waiting_since=since,
            wait=str(facts.get("wait") or "approval"),
        )
        for since, facts in pending
        if isinstance(facts, dict) and facts.get("tool_call_id")
    }
    answers = (
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
        .values_list("facts", "run_id", "run__run_id", "timestamp", "message__data")
    )
    found = [
        (call_id, run_pk, run_id, timestamp, data)
        for facts, run_pk, run_id, timestamp, data in answers
        for call_id in ({p.get("tool_call_id") for p in facts.get("parts", ())} if isinstance(facts, dict) else set())
        & approvals.keys()
    ]
    ledgers: dict[int, set[str]] = {}
    for run_pk, call_id in (
        scoped(ToolEffect, tenant).filter(run__in={f[1] for f in found}).values_list("run_id", "tool_call_id")
    ):
        ledgers.setdefault(run_pk, set()).add(call_id)
    traced = set(
        scoped(Snapshot, tenant).filter(run__in={f[1] for f in found}, via="otlp").values_list("run_id", flat=True)
    )
    for call_id, run_pk, run_id, timestamp, data in found:
        approval = approvals[call_id]
        # A run that came in over OTLP records every call that ran (its tool spans), so no ledger is no run.
        ran = call_id in ledgers.get(run_pk, set()) if run_pk in ledgers or run_pk in traced else None
        if approval.state == AWAITING_APPROVAL and (state := _decision(json.loads(data), call_id, ran)):
            approvals[call_id] = replace(approval, state=state, decided_in_run=run_id, decided_at=timestamp)
    return list(approvals.values())
