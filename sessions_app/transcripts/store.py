"""Reading and rewriting a conversation's recovered transcript; deleting conversations with their index.

The ORM edge around `sessions_app.core.recovery`: load snapshots as plain messages, recover, and write only the part of
the transcript that changed, keeping the search index in the same transaction.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, QuerySet
from pydantic_ai.messages import ModelMessage

from search_app import index
from sessions_app.core.recovery import RecoveredMessage, RunInput, SnapshotInput, message_hash, recover_conversation
from sessions_app.core.rendering import message_role, message_text
from sessions_app.core.serialization import dump_message, load_message, sha256_text
from sessions_app.models import Conversation, Run, Snapshot, SnapshotMessage, StoredMessage, TranscriptEntry


def load_run_inputs(
    conversation: Conversation, known: dict[int, ModelMessage] | None = None
) -> tuple[list[RunInput], dict[int, int]]:
    """The conversation's runs and snapshots as plain recovery input, plus id(message object) → StoredMessage id.

    `known` maps StoredMessage ids to message objects the caller already holds (ingestion just validated them),
    so only the others are read and parsed again.
    """
    runs = list(Run.objects.filter(tenant_id=conversation.tenant_id, conversation=conversation))
    # A run's snapshots in step order, whatever order they arrived in (a step without a number: by arrival).
    snapshots = list(
        Snapshot.objects.filter(tenant_id=conversation.tenant_id, run__in=runs).order_by(
            "run_id", F("step").asc(nulls_last=True), "seq"
        )
    )
    refs = (
        SnapshotMessage.objects.filter(snapshot__in=snapshots)
        .order_by("snapshot_id", "position")
        .values_list("snapshot_id", "message_id")
    )
    message_ids_by_snapshot: dict[int, list[int]] = {}
    for snapshot_id, message_id in refs:
        message_ids_by_snapshot.setdefault(snapshot_id, []).append(message_id)
    wanted = {mid for ids in message_ids_by_snapshot.values() for mid in ids}
    known = known or {}
    objects = {mid: known[mid] for mid in wanted if mid in known}
    missing = [mid for mid in wanted if mid not in objects]
    for start in range(0, len(missing), 2000):
        rows = StoredMessage.objects.filter(
            tenant_id=conversation.tenant_id, id__in=missing[start : start + 2000]
        ).values_list("id", "data")
        objects.update((mid, load_message(data)) for mid, data in rows)
    stored_id_of = {id(obj): mid for mid, obj in objects.items()}
    snapshots_by_run: dict[int, list[SnapshotInput]] = {}
    for snapshot in snapshots:
        placed = snapshots_by_run.setdefault(snapshot.run_id, [])
        placed.append(
            SnapshotInput(
                seq=len(placed),
                state="complete" if snapshot.state == "complete" else "interrupted",
                messages=[objects[mid] for mid in message_ids_by_snapshot.get(snapshot.id, [])],
            )
        )
    run_inputs = [
        RunInput(
            run_id=run.run_id,
            parent_run_id=run.parent_run_id or None,
            started_at=run.started_at,
            arrival=run.id,  # ids grow in insertion order, and runs of a conversation are inserted under its lock
            snapshots=snapshots_by_run.get(run.id, []),
        )
        for run in runs
    ]
    return run_inputs, stored_id_of


def _stored_message_id(conversation: Conversation, message: ModelMessage, stored_id_of: dict[int, int]) -> int:
    """The StoredMessage of a recovered message; one recovery derived (a request split from its summary) is stored."""
    found = stored_id_of.get(id(message))
    if found is not None:
        return found
    data = dump_message(message)
    stored, _ = StoredMessage.objects.get_or_create(
        tenant_id=conversation.tenant_id,
        sha256=sha256_text(data),
        defaults={"content_hash": message_hash(message), "data": data},
    )
    stored_id_of[id(message)] = stored.id
    return stored.id


@dataclass(frozen=True)
class _Row:
    """What identifies a transcript entry: enough to tell whether a stored row still stands."""

    position: int
    run_pk: int
    message_id: int
    recovered_from_compaction: bool
    summary_artifact: bool


def _rows_for(
    conversation: Conversation, recovered: Sequence[RecoveredMessage], stored_id_of: dict[int, int]
) -> list[_Row]:
    run_pk = dict(
        Run.objects.filter(tenant_id=conversation.tenant_id, conversation=conversation).values_list("run_id", "id")
    )
    rows = []
    position = 0
    for item in recovered:
        message_id = _stored_message_id(conversation, item.message, stored_id_of)
        rows.append(
            _Row(position, run_pk[item.run_id], message_id, item.recovered_from_compaction, item.summary_artifact)
        )
        if not item.summary_artifact:
            position += 1
    return rows


def _entry(conversation: Conversation, row: _Row, message: ModelMessage) -> TranscriptEntry:
    return TranscriptEntry(
        tenant_id=conversation.tenant_id,
        conversation=conversation,
        position=row.position,
        run_id=row.run_pk,
        message_id=row.message_id,
        role=message_role(message),
        text=message_text(message),
        timestamp=message.timestamp,
        recovered_from_compaction=row.recovered_from_compaction,
        summary_artifact=row.summary_artifact,
    )


def rebuild_transcript(conversation: Conversation, known: dict[int, ModelMessage] | None = None) -> int:
    """Recover the conversation again and rewrite the transcript from its first changed entry; returns its length.

    Entries before the first difference stay (with their index rows), and only the entries after it are rendered
    and written, so appending a step costs the new messages.
    """
    with transaction.atomic():
        run_inputs, stored_id_of = load_run_inputs(conversation, known)
        recovered = recover_conversation(run_inputs)
        rows = _rows_for(conversation, recovered, stored_id_of)
        old = list(
            TranscriptEntry.objects.filter(tenant_id=conversation.tenant_id, conversation=conversation)
            .order_by("position", "-summary_artifact", "id")
            .values_list("id", "position", "run_id", "message_id", "recovered_from_compaction", "summary_artifact")
        )
        keep = 0
        while keep < min(len(old), len(rows)) and _Row(*old[keep][1:]) == rows[keep]:
            keep += 1
        stale = [entry_id for entry_id, *_ in old[keep:]]
        if stale:
            index.entries_removed(conversation.tenant_id, stale)
            TranscriptEntry.objects.filter(id__in=stale).delete()
        added = TranscriptEntry.objects.bulk_create(
            [_entry(conversation, row, item.message) for row, item in zip(rows[keep:], recovered[keep:], strict=True)],
            batch_size=1000,
        )
        if added:
            index.entries_added(added)
        length = sum(1 for row in rows if not row.summary_artifact)
        # "Updated" means the conversation's last activity, not when we last rewrote rows.
        stamps = [item.message.timestamp for item in recovered if item.message.timestamp]
        last_activity = max(stamps, default=conversation.updated_at)
        Conversation.objects.filter(pk=conversation.pk).update(message_count=length, updated_at=last_activity)
        conversation.message_count, conversation.updated_at = length, last_activity
    return length


def delete_conversations(conversations: QuerySet[Conversation]) -> int:
    """Delete conversations with their runs, snapshots, transcript, index entries and now-unreferenced messages."""
    with transaction.atomic():
        rows = list(conversations.values_list("id", "tenant_id"))
        if not rows:
            return 0
        ids = [cid for cid, _ in rows]
        for tenant_id in {tid for _, tid in rows}:
            entry_ids = list(
                TranscriptEntry.objects.filter(tenant_id=tenant_id, conversation_id__in=ids).values_list(
                    "id", flat=True
                )
            )
            if entry_ids:
                index.entries_removed(tenant_id, entry_ids)
        candidate_messages = set(
            SnapshotMessage.objects.filter(snapshot__run__conversation_id__in=ids).values_list("message_id", flat=True)
        )
        Conversation.objects.filter(id__in=ids).delete()
        still_used = set(
            SnapshotMessage.objects.filter(message_id__in=candidate_messages).values_list("message_id", flat=True)
        )
        StoredMessage.objects.filter(id__in=candidate_messages - still_used).delete()
        return len(ids)
