"""Keeping a conversation's recovered transcript; deleting conversations with their index.

The ORM edge around `sessions_app.transcripts.recovery.fold`. A snapshot that comes next in recovery order (a later step of the
conversation's last run, or a run starting after every other) is folded into the conversation's recovery kept in
this process, and only the rows it changed are written: the cost follows the new snapshot, not the history.
Anything else (the first snapshot this process sees of a conversation, a late step, a run that starts earlier
than another, a fold another process moved on) recovers the conversation from scratch and rewrites the
transcript from its first changed row. Both write the search index in the same transaction.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, QuerySet
from pydantic_ai.messages import ModelMessage

from model_messages.rendering import message_role, message_text
from model_messages.serialization import dump_message, load_message, sha256_text
from search_app import index
from sessions_app.models import Conversation, Run, Snapshot, SnapshotMessage, StoredMessage, TranscriptEntry
from sessions_app.transcripts.message_facts import message_facts
from sessions_app.transcripts.recovery.fold import (
    FoldChange,
    RecoveredMessage,
    RecoveryFold,
    RunInput,
    SnapshotInput,
    run_order,
)
from sessions_app.transcripts.recovery.hashing import message_hash

SnapshotKey = tuple[bool, int, int]  # (no step, step, arrival): a run's snapshots in recovery order


def snapshot_key(snapshot: Snapshot) -> SnapshotKey:
    return (snapshot.step is None, snapshot.step or 0, snapshot.seq)


def load_run_inputs(
    conversation: Conversation, known: dict[int, ModelMessage] | None = None
) -> tuple[list[RunInput], dict[int, int], dict[int, SnapshotKey]]:
    """The conversation's runs and snapshots as plain recovery input, id(message object) → StoredMessage id, and
    each run's last snapshot key (by run pk).

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
        SnapshotMessage.objects.filter(tenant_id=conversation.tenant_id, snapshot__in=snapshots)
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
    last_keys: dict[int, SnapshotKey] = {}
    for snapshot in snapshots:
        last_keys[snapshot.run_id] = snapshot_key(snapshot)
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
    return run_inputs, stored_id_of, last_keys


def store_messages(tenant_id: int, wanted: dict[str, tuple[str, str]]) -> tuple[dict[str, int], int]:
    """StoredMessage ids by sha256 for `wanted` (sha256 -> content hash, serialized message), inserting only the
    ones the tenant never stored; returns the ids and how many were inserted. A query per 500 messages."""
    ids: dict[str, int] = {}
    shas = list(wanted)
    for start in range(0, len(shas), 500):
        chunk = shas[start : start + 500]
        ids.update(StoredMessage.objects.filter(tenant_id=tenant_id, sha256__in=chunk).values_list("sha256", "id"))
    # Sorted, and conflicts ignored: two writers storing the same new message (a shared system prompt) both
    # succeed, and each waits for the other's rows in the same order, so they cannot deadlock.
    missing = sorted(sha for sha in shas if sha not in ids)
    StoredMessage.objects.bulk_create(
        [
            StoredMessage(tenant_id=tenant_id, sha256=sha, content_hash=wanted[sha][0], data=wanted[sha][1])
            for sha in missing
        ],
        batch_size=500,
        ignore_conflicts=True,
    )
    for start in range(0, len(missing), 500):
        chunk = missing[start : start + 500]
        ids.update(StoredMessage.objects.filter(tenant_id=tenant_id, sha256__in=chunk).values_list("sha256", "id"))
    return ids, len(missing)


def _resolve_stored_ids(
    conversation: Conversation, messages: Iterable[ModelMessage], stored_id_of: dict[int, int]
) -> None:
    """Enter in `stored_id_of` the StoredMessage of every message missing from it: those recovery derived (a
    request split from its summary) are stored too."""
    unknown: dict[int, tuple[ModelMessage, str]] = {}  # holding each message keeps its id unique
    wanted: dict[str, tuple[str, str]] = {}
    for message in messages:
        if id(message) in stored_id_of or id(message) in unknown:
            continue
        data = dump_message(message)
        sha = sha256_text(data)
        unknown[id(message)] = (message, sha)
        wanted.setdefault(sha, (message_hash(message), data))
    if wanted:
        ids, _ = store_messages(conversation.tenant_id, wanted)
        stored_id_of.update({key: ids[sha] for key, (_, sha) in unknown.items()})


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
    _resolve_stored_ids(conversation, (item.message for item in recovered), stored_id_of)
    for item in recovered:
        message_id = stored_id_of[id(item.message)]
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
        facts=message_facts(message),
    )


def rebuild_transcript(conversation: Conversation, known: dict[int, ModelMessage] | None = None) -> int:
    """Recover the conversation again and rewrite the transcript from its first changed entry; returns its length.

    Entries before the first difference stay (with their index rows), and only the entries after it are rendered
    and written, so appending a step costs the new messages.
    """
    with transaction.atomic():
        run_inputs, stored_id_of, last_keys = load_run_inputs(conversation, known)
        fold, last_run = _fold_from_scratch(run_inputs)
        recovered = fold.recovered()
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
            TranscriptEntry.objects.filter(tenant_id=conversation.tenant_id, id__in=stale).delete()
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
        count = sum(len(run_input.snapshots) for run_input in run_inputs)
        Conversation.objects.filter(tenant_id=conversation.tenant_id, pk=conversation.pk).update(
            message_count=length, updated_at=last_activity, snapshots_folded=count
        )
        conversation.message_count, conversation.updated_at = length, last_activity
        conversation.snapshots_folded = count
        entries = [row for row in rows if not row.summary_artifact]
        kept = _Kept(
            fold=fold,
            stored_id_of={id(e.message): row.message_id for e, row in zip(fold.entries, entries, strict=True)},
            message_ids=[row.message_id for row in entries],
            snapshots_folded=count,
            folded_runs={run_input.arrival for run_input in run_inputs},
            last=(run_order(last_run), last_keys[last_run.arrival]) if last_run else None,
        )
        _keep_after_commit(conversation, kept)
    return length


@dataclass(frozen=True)
class NewSnapshot:
    """A snapshot ingestion just stored, with the messages it validated."""

    run: Run
    snapshot: Snapshot
    messages: Sequence[ModelMessage]
    stored_ids: Sequence[int]  # the StoredMessage of each message

    @property
    def key(self) -> SnapshotKey:
        return snapshot_key(self.snapshot)


@dataclass
class _Kept:
    """A conversation's recovery as this process last wrote it."""

    fold: RecoveryFold
    stored_id_of: dict[int, int]  # id(message) -> StoredMessage id; the fold holds every such message alive
    message_ids: list[int]  # position -> StoredMessage id, as written
    snapshots_folded: int  # as written on the conversation row: another process's write changes it
    folded_runs: set[int]  # run pks
    last: tuple[tuple[datetime, int, str], SnapshotKey] | None  # the last run folded and its last snapshot
    messages_held: int = field(default=0)


KeptKey = tuple[str, int, str, datetime]

_kept: OrderedDict[KeptKey, _Kept] = OrderedDict()  # folds of committed writes, shared by the process's threads
_kept_lock = threading.Lock()


@dataclass
class _Pending:
    """A fold written by this thread's open transaction; `marker` is the on-commit callback of its last write."""

    kept: _Kept
    marker: Callable[[], None]

    @property
    def messages_held(self) -> int:
        return self.kept.messages_held


# Folds of writes not yet committed, so that the next batch of the same transaction (an import's next chunk) goes
# on from them instead of recovering from scratch. Per thread: a connection belongs to one thread.
_open = threading.local()


def _pending_folds() -> OrderedDict[KeptKey, _Pending]:
    if not hasattr(_open, "folds"):
        _open.folds = OrderedDict()
    return _open.folds


def _kept_key(conversation: Conversation) -> KeptKey:
    # The creation time too: a conversation deleted and made again may get the same primary key on SQLite.
    return (connection.alias, conversation.pk, conversation.external_id, conversation.created_at)


def _within_limit[Fold: (_Kept, _Pending)](folds: OrderedDict[KeptKey, Fold]) -> None:
    """Forget the least recently written folds beyond the messages a process may hold."""
    limit = settings.SESSIONDESK_RECOVERY_CACHE_MESSAGES
    held = sum(fold.messages_held for fold in folds.values())
    while folds and held > limit:
        held -= folds.popitem(last=False)[1].messages_held


def _take_kept(conversation: Conversation) -> _Kept | None:
    key = _kept_key(conversation)
    pending = _pending_folds().pop(key, None)
    # A write's marker leaves the on-commit list when its transaction (or savepoint) rolls back: its fold would be
    # ahead of the rows, so it is dropped and the committed fold (if any) is the one to go on from.
    if pending is not None and any(entry[1] is pending.marker for entry in connection.run_on_commit):
        return pending.kept
    with _kept_lock:
        return _kept.pop(key, None)


def _keep_after_commit(conversation: Conversation, kept: _Kept) -> None:
    """Keep the fold for this transaction's next write, and for everyone's once it commits."""
    key = _kept_key(conversation)
    kept.messages_held = len(kept.fold.entries) + kept.fold.snapshots_folded
    pending = _pending_folds()

    def marker() -> None:
        held = pending.get(key)
        if held is None or held.marker is not marker:
            return  # a later write of the same transaction holds the fold, or it was forgotten
        del pending[key]
        with _kept_lock:
            _kept[key] = held.kept
            _kept.move_to_end(key)
            _within_limit(_kept)

    pending[key] = _Pending(kept, marker)
    pending.move_to_end(key)
    _within_limit(pending)
    transaction.on_commit(marker)


def _fold_from_scratch(run_inputs: Sequence[RunInput]) -> tuple[RecoveryFold, RunInput | None]:
    """The conversation folded from scratch (as `recover_conversation` does), and the last run folded."""
    fold = RecoveryFold()
    last = None
    for run in sorted(run_inputs, key=run_order):
        for snapshot in sorted(run.snapshots, key=lambda s: s.seq):
            fold.apply(run.run_id, snapshot.state, snapshot.messages)
            last = run
    return fold, last


def _comes_next(kept: _Kept, conversation: Conversation, batch: Sequence[NewSnapshot]) -> bool:
    """Whether the batch extends the kept fold in recovery order, and the fold is the store's latest."""
    if conversation.snapshots_folded != kept.snapshots_folded:
        return False  # another process folded snapshots in meanwhile
    last = kept.last
    for new in batch:
        run_key = (new.run.started_at, new.run.pk, new.run.run_id)
        if last is not None:
            last_run, last_snapshot = last
            same_run = run_key == last_run
            if (same_run and new.key <= last_snapshot) or (not same_run and run_key <= last_run):
                return False
            if not same_run and new.run.pk in kept.folded_runs:
                return False
        last = (run_key, new.key)
    return True


def update_transcript(
    conversation: Conversation, batch: Sequence[NewSnapshot], known: dict[int, ModelMessage] | None = None
) -> int:
    """Bring the transcript up to date after `batch` was stored; returns its length.

    When the batch comes next in recovery order and this process kept the conversation's fold, only the batch is
    folded and only the rows it changed are written; otherwise the conversation is recovered from scratch.
    """
    kept = _take_kept(conversation)
    ordered = sorted(batch, key=lambda n: ((n.run.started_at, n.run.pk, n.run.run_id), n.key))
    if kept is None and conversation.snapshots_folded == 0 and conversation.message_count == 0:
        # Nothing folded yet (a new conversation): the batch is all there is, so fold it from an empty fold
        # rather than read it back (an import's conversations all start here).
        kept = _Kept(RecoveryFold(), stored_id_of={}, message_ids=[], snapshots_folded=0, folded_runs=set(), last=None)
    if kept is None:
        return rebuild_transcript(conversation, known)
    if not _comes_next(kept, conversation, ordered):
        return rebuild_transcript(conversation, known)
    # Inside ingestion's transaction a savepoint buys nothing (a failure rolls the whole request back) and costs
    # two round trips per request.
    with transaction.atomic(savepoint=False):
        fold = kept.fold
        first = len(fold.entries)
        changes: list[FoldChange] = []
        for new in ordered:
            changes.append(fold.apply(new.run.run_id, new.snapshot.state, new.messages))
            kept.folded_runs.add(new.run.pk)
            kept.last = ((new.run.started_at, new.run.pk, new.run.run_id), new.key)
        batch_ids = {id(m): stored_id for n in ordered for m, stored_id in zip(n.messages, n.stored_ids, strict=True)}
        _write_changes(conversation, kept, changes, first, batch_ids)
        kept.snapshots_folded += len(ordered)
        _keep_after_commit(conversation, kept)
    return len(fold.entries)


def _write_changes(
    conversation: Conversation, kept: _Kept, changes: Sequence[FoldChange], first: int, batch_ids: dict[int, int]
) -> None:
    """Write what the folded snapshots changed: new rows, rows now holding a later copy, flags, artifacts."""
    fold = kept.fold
    known = kept.stored_id_of
    needed = [fold.entries[p].message for change in changes for p in change.replaced if p < first]
    needed += [artifact.message for change in changes for artifact in change.artifacts]
    needed += [fold.entries[p].message for p in range(first, len(fold.entries))]
    for message in needed:
        if id(message) not in known and id(message) in batch_ids:
            known[id(message)] = batch_ids[id(message)]
    _resolve_stored_ids(conversation, needed, known)

    def stored_id(message: ModelMessage) -> int:
        return known[id(message)]

    rewritten: set[int] = set()
    flags: dict[int, bool] = {}
    for change in changes:
        for position in change.replaced:
            if position < first and stored_id(fold.entries[position].message) != kept.message_ids[position]:
                rewritten.add(position)
        flags.update({p: v for p, v in change.flags.items() if p < first})
    touched = [fold.entries[p].run_id for p in (*rewritten, *range(first, len(fold.entries)))]
    named = {*touched, *(artifact.run_id for change in changes for artifact in change.artifacts)}
    run_pk = dict(
        Run.objects.filter(tenant_id=conversation.tenant_id, conversation=conversation, run_id__in=named).values_list(
            "run_id", "id"
        )
    )
    new_rows: list[TranscriptEntry] = []
    for change in changes:
        for artifact in change.artifacts:
            row = _Row(change.appended_from, run_pk[artifact.run_id], stored_id(artifact.message), False, True)
            new_rows.append(_entry(conversation, row, artifact.message))
    for position in sorted(rewritten) + list(range(first, len(fold.entries))):
        entry = fold.entries[position]
        row = _Row(position, run_pk[entry.run_id], stored_id(entry.message), fold.dropped(position), False)
        new_rows.append(_entry(conversation, row, entry.message))
        if position < first:
            kept.message_ids[position] = row.message_id
        else:
            kept.message_ids.append(row.message_id)
    entries = TranscriptEntry.objects.filter(
        tenant_id=conversation.tenant_id, conversation=conversation, summary_artifact=False
    )
    if rewritten:
        stale = list(entries.filter(position__in=rewritten).values_list("id", flat=True))
        index.entries_removed(conversation.tenant_id, stale)
        TranscriptEntry.objects.filter(tenant_id=conversation.tenant_id, id__in=stale).delete()
    for value in (True, False):
        positions = [p for p, flag in flags.items() if flag is value and p not in rewritten]
        if positions:
            entries.filter(position__in=positions).update(recovered_from_compaction=value)
    # Artifacts first: at one position, an artifact was seen before the message that follows it.
    added = TranscriptEntry.objects.bulk_create(new_rows, batch_size=1000)
    if added:
        index.entries_added(added)
    stamps = [e.timestamp for e in added if e.timestamp]
    last_activity = max([conversation.updated_at, *stamps])
    folded = kept.snapshots_folded + len(changes)
    Conversation.objects.filter(tenant_id=conversation.tenant_id, pk=conversation.pk).update(
        message_count=len(fold.entries), updated_at=last_activity, snapshots_folded=folded
    )
    conversation.message_count, conversation.updated_at = len(fold.entries), last_activity
    conversation.snapshots_folded = folded


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
