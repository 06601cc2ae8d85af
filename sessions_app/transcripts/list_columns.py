"""The conversation list's columns, kept at ingest so the list reads them instead of aggregating (issue 26).

Every column is moved by what a write did, not recomputed from the history:

- transcript rows (`note_rows`): the rows an ingest removed are taken off with the facts stored on them and the
  rows it added are put on, per run and per conversation (`UsageTotals`), so the cost follows the new rows;
- runs (`note_runs`): a run's last activity, last snapshot and duration from its new snapshot; the conversation's
  run count, duration and last activity from its runs (one grouped query over the batch's conversations' runs);
- verdicts (`note_verdicts`): the gravest stored verdict of a conversation's runs, after every audit.

`recompute_conversation` computes everything from scratch for one conversation: the migration that added the
columns uses it, and the tests compare the kept columns against it. `manage.py reprice` (after a tenant's
negotiated prices change) recomputes the cost columns of a whole tenant in bulk (sessions_app.transcripts.reprice).
"""

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Case, Count, F, Max, Min, Sum, Value, When
from pydantic_ai.messages import ModelMessage

from model_messages.rendering import user_prompt_text
from model_messages.serialization import load_message
from sessions_app.audit.vocabulary import ALL_VERDICTS, Verdict, verdict_rank
from sessions_app.models import Conversation, Run, Tenant, TranscriptEntry
from sessions_app.models.audit import RunVerdict
from sessions_app.tenancy.bulk_update import increment_rows
from sessions_app.transcripts.prices import NegotiatedPrice, parse_overrides
from sessions_app.transcripts.usage_totals import Totals, row_totals

PREVIEW_CHARS = 300
NO_VERDICT_RANK = 99


def tenant_prices(tenant: Tenant | int) -> dict[str, NegotiatedPrice]:
    """The tenant's negotiated prices (an unreadable entry is left to its list price, never a 500 at ingest)."""
    if isinstance(tenant, Tenant):
        data = tenant.price_overrides
    else:
        data = Tenant.objects.filter(pk=tenant).values_list("price_overrides", flat=True).first()
    try:
        return parse_overrides(data or {})
    except ValueError:
        return {}


def one_line(text: str) -> str:
    return " ".join(text.split())[:PREVIEW_CHARS]


def first_prompt(pairs: Iterable[tuple[int, ModelMessage]]) -> str:
    """The first non-empty user prompt among (position, message) pairs, as one line ("" when none)."""
    for _, message in sorted(pairs, key=lambda pair: pair[0]):
        text = one_line(user_prompt_text(message))
        if text:
            return text
    return ""


def _increment(totals: Totals) -> dict[str, Any]:
    return {name: F(name) + value for name, value in totals.as_dict().items() if value}


def note_rows(
    conversation: Conversation,
    removed: Sequence[tuple[int, str, Mapping[str, Any]]],
    added: Sequence[TranscriptEntry],
    added_messages: Iterable[tuple[int, ModelMessage]],
    prices: Mapping[str, NegotiatedPrice],
) -> None:
    """Move the conversation's and its runs' totals by the rows removed ((run pk, role, facts) each) and added,
    and its first user prompt when it has none yet or the rows before the old end changed.

    Called after the rows are written and before `conversation.message_count` is moved on."""
    per_run: dict[int, Totals] = {}
    for run_pk, _, facts in removed:
        per_run[run_pk] = per_run.get(run_pk, Totals()) - row_totals(facts, prices)
    for entry in added:
        if not entry.summary_artifact:
            per_run[entry.run_id] = per_run.get(entry.run_id, Totals()) + row_totals(entry.facts, prices)
    tenant_id = conversation.tenant_id
    total = Totals()
    # One statement for all the runs (an import's chunk touches a hundred runs of a conversation).
    increment_rows(Run, tenant_id, {pk: delta.as_dict() for pk, delta in per_run.items()}, Totals.column_names())
    for delta in per_run.values():
        total = total + delta
    update = _increment(total)
    added_prompts = [(position, m) for position, m in added_messages if user_prompt_text(m).strip()]
    # Appending after the stored rows cannot move the first prompt; a removed user row or a prompt written in
    # among the stored rows (a late snapshot) can: then it is read back (one query on the index).
    moved = any(role == "user" for _, role, _ in removed) or any(
        position < conversation.message_count for position, _ in added_prompts
    )
    if moved:
        update["first_user_text"] = _stored_first_prompt(conversation)
    elif not conversation.first_user_text and (text := first_prompt(added_prompts)):
        update["first_user_text"] = text
    if update:
        Conversation.objects.filter(tenant_id=tenant_id, pk=conversation.pk).update(**update)
        if "first_user_text" in update:
            conversation.first_user_text = update["first_user_text"]


def _stored_first_prompt(conversation: Conversation) -> str:
    """The first user prompt of the stored transcript: from the first few user rows (one query, on the index)."""
    rows = (
        TranscriptEntry.objects.filter(
            tenant_id=conversation.tenant_id,
            conversation=conversation,
            role="user",
            summary_artifact=False,
            message__tenant_id=conversation.tenant_id,  # both sides on the tenant: Citus routes it to one shard
        )
        .order_by("position")
        .values_list("position", "message__data")[:5]
    )
    return first_prompt((position, load_message(data)) for position, data in rows)


def run_duration_ms(started: datetime, finished: datetime | None, last_activity: datetime | None) -> int:
    """Start to finish, or to the last activity while it runs (never to now: an idle run is STUCK, not long)."""
    end = finished or last_activity or started
    return max(int((end - started).total_seconds() * 1000), 0)


def note_run_snapshot(run: Run, last_stamp: datetime | None, received: datetime) -> None:
    """A run's activity columns after its latest snapshot (saved by the caller with the run's other fields), given
    the latest time its messages are stamped with."""
    run.last_activity_at = max(stamp for stamp in (run.started_at, last_stamp, run.finished_at) if stamp)
    run.last_snapshot_at = received
    run.duration_ms = run_duration_ms(run.started_at, run.finished_at, run.last_activity_at)


RUN_COLUMNS = ["last_activity_at", "last_snapshot_at", "duration_ms"]


def note_runs(tenant: Tenant | int, conversation_ids: Iterable[int]) -> None:
    """The run count, duration and last activity of these conversations, from their runs (one grouped query)."""
    tenant_id = tenant.pk if isinstance(tenant, Tenant) else tenant
    ids = sorted(set(conversation_ids))
    if not ids:
        return
    grouped = (
        Run.objects.filter(tenant_id=tenant_id, conversation_id__in=ids)
        .values("conversation_id")
        .annotate(n=Count("id"), duration=Sum("duration_ms"), last=Max("last_activity_at"), start=Max("started_at"))
        .order_by()
    )
    for row in grouped:
        Conversation.objects.filter(tenant_id=tenant_id, pk=row["conversation_id"]).update(
            run_count=row["n"], duration_ms=row["duration"] or 0, last_activity_at=row["last"] or row["start"]
        )


def worst_verdict(verdicts: Iterable[str]) -> tuple[str, int]:
    """The gravest of these verdicts and its rank (blank and NO_VERDICT_RANK for none). Pure."""
    known = [v for v in verdicts if v in {str(member) for member in ALL_VERDICTS}]
    if not known:
        return "", NO_VERDICT_RANK
    worst = min(known, key=verdict_rank)
    return str(Verdict(worst)), verdict_rank(worst)


def _verdict_of_rank(rank: int) -> tuple[str, int]:
    return (str(ALL_VERDICTS[rank]), rank) if 0 <= rank < len(ALL_VERDICTS) else ("", NO_VERDICT_RANK)


def note_verdicts(tenant: Tenant | int, conversation_ids: Iterable[int]) -> None:
    """Each conversation's worst stored run verdict (one query for the verdicts, one update)."""
    tenant_id = tenant.pk if isinstance(tenant, Tenant) else tenant
    ids = set(conversation_ids)
    if not ids:
        return
    # The gravest rank by the database: a conversation of 5,000 runs read its 5,000 verdicts back on every write.
    rank = Case(
        *(When(verdict=str(verdict), then=Value(verdict_rank(verdict))) for verdict in ALL_VERDICTS),
        default=Value(NO_VERDICT_RANK),
    )
    gravest = dict(
        RunVerdict.objects.filter(tenant_id=tenant_id, run__tenant_id=tenant_id, run__conversation_id__in=sorted(ids))
        .order_by()
        .values("run__conversation_id")
        .annotate(gravest=Min(rank))
        .values_list("run__conversation_id", "gravest")
    )
    worst = {
        conversation_id: _verdict_of_rank(gravest.get(conversation_id, NO_VERDICT_RANK)) for conversation_id in ids
    }
    # One UPDATE whatever the number of conversations or verdicts (an audit's query count does not grow).
    Conversation.objects.filter(tenant_id=tenant_id, pk__in=sorted(ids)).update(
        worst_verdict=Case(*(When(pk=pk, then=Value(v)) for pk, (v, _) in worst.items()), default=Value("")),
        worst_verdict_rank=Case(
            *(When(pk=pk, then=Value(rank)) for pk, (_, rank) in worst.items()), default=Value(NO_VERDICT_RANK)
        ),
    )


def recompute_conversation(conversation: Conversation, prices: Mapping[str, NegotiatedPrice]) -> None:
    """Every list column of one conversation and its runs from scratch (the migration, the tests)."""
    tenant_id = conversation.tenant_id
    run_pks = Run.objects.filter(tenant_id=tenant_id, conversation=conversation).values_list("pk", flat=True)
    per_run: dict[int, Totals] = {pk: Totals() for pk in run_pks}
    rows = TranscriptEntry.objects.filter(
        tenant_id=tenant_id, conversation=conversation, summary_artifact=False
    ).values_list("run_id", "facts")
    for run_pk, facts in rows.iterator(chunk_size=2000):
        per_run[run_pk] = per_run.get(run_pk, Totals()) + row_totals(facts, prices)
    total = Totals()
    for run_pk, totals in per_run.items():
        Run.objects.filter(tenant_id=tenant_id, pk=run_pk).update(**totals.as_dict())
        total = total + totals
    Conversation.objects.filter(tenant_id=tenant_id, pk=conversation.pk).update(
        **total.as_dict(), first_user_text=_stored_first_prompt(conversation)
    )
    note_runs(tenant_id, [conversation.pk])
    note_verdicts(tenant_id, [conversation.pk])
