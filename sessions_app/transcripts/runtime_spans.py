"""The runtime spans OTLP brought in (`RuntimeSpan`: compactions, approval reviews, judgements), read for the
conversation page: where each compaction falls in the transcript, and each tool call's reviews and judgements."""

from bisect import bisect_right
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sessions_app.models import Conversation, RuntimeSpan, TranscriptEntry
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
