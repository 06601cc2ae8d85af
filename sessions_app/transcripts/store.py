"""Keeping a conversation's recovered transcript; deleting conversations with their index.

The ORM edge around `sessions_app.transcripts.recovery`. A snapshot that comes next in recovery order (a later step of
the conversation's last run, or a run starting after every other) is folded into the conversation's recovery kept in
this process (`fold_cache`), and only the rows it changed are written: the cost follows the new snapshot, not the
history. Anything else (the first snapshot this process sees of a conversation, a late step, a run that starts
earlier than another, a fold another process moved on) recovers the conversation from scratch and rewrites the
transcript from its first changed row. Both write the search index in the same transaction.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce
from operator import or_

from django.db import transaction
from django.db.models import Max, Q, QuerySet
from pydantic_ai.messages import ModelMessage

from model_messages.rendering import message_role, message_text
from model_messages.serialization import dump_message, sha256_text
from search_app import index
from sessions_app.ingest.message_memo import MEMO
from sessions_app.ingest.storage import store_messages
from sessions_app.models import Conversation, Run, Snapshot, SnapshotMessage, StoredMessage, TranscriptEntry
from sessions_app.transcripts import fold_cache, list_columns
from sessions_app.transcripts.fold_cache import Kept
from sessions_app.transcripts.message_facts import message_facts
from sessions_app.transcripts.prices import NegotiatedPrice
from sessions_app.transcripts.recovery.fold import FoldChange, RecoveredMessage, RecoveryFold, RunInput, run_order
from sessions_app.transcripts.recovery.hashing import message_hash
from sessions_app.transcripts.run_inputs import SnapshotKey, load_run_inputs, snapshot_key


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


def _removed_facts(conversation: Conversation, entry_ids: Sequence[int]) -> list[tuple[int, str, dict[str, object]]]:
    """(run, role, facts) of transcript rows about to be removed, for the list columns to take them off."""
    if not entry_ids:
        return []
    return list(
        TranscriptEntry.objects.filter(
            tenant_id=conversation.tenant_id, id__in=list(entry_ids), summary_artifact=False
        ).values_list("run_id", "role", "facts")
    )


def rebuild_transcript(
    conversation: Conversation,
    known: dict[int, ModelMessage] | None = None,
    prices: Mapping[str, NegotiatedPrice] | None = None,
) -> int:
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
        removed = _removed_facts(conversation, stale)
        if stale:
            index.entries_removed(conversation.tenant_id, stale)
            TranscriptEntry.objects.filter(tenant_id=conversation.tenant_id, id__in=stale).delete()
        added = TranscriptEntry.objects.bulk_create(
            [_entry(conversation, row, item.message) for row, item in zip(rows[keep:], recovered[keep:], strict=True)],
            batch_size=1000,
        )
        if added:
            index.entries_added(added, [item.message for item in recovered[keep:]])
        list_columns.note_rows(
            conversation,
            removed,
            added,
            [(entry.position, item.message) for entry, item in zip(added, recovered[keep:], strict=True)],
            list_columns.tenant_prices(conversation.tenant_id) if prices is None else prices,
        )
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
        kept = Kept(
            fold=fold,
            stored_id_of={id(e.message): row.message_id for e, row in zip(fold.entries, entries, strict=True)},
            message_ids=[row.message_id for row in entries],
            snapshots_folded=count,
            folded_runs={run_input.arrival for run_input in run_inputs},
            last=(run_order(last_run), last_keys[last_run.arrival]) if last_run else None,
            max_snapshot_id=_newest_snapshot(conversation),
        )
        fold_cache.keep_after_commit(conversation, kept)
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


def _fold_from_scratch(run_inputs: Sequence[RunInput]) -> tuple[RecoveryFold, RunInput | None]:
    """The conversation folded from scratch (as `recover_conversation` does), and the last run folded."""
    fold = RecoveryFold()
    last = None
    for run in sorted(run_inputs, key=run_order):
        for snapshot in sorted(run.snapshots, key=lambda s: s.seq):
            fold.apply(run.run_id, snapshot.state, snapshot.messages)
            last = run
    return fold, last


def _newest_snapshot(conversation: Conversation) -> int:
    tenant_id = conversation.tenant_id
    newest = Snapshot.objects.filter(tenant_id=tenant_id, run__tenant_id=tenant_id, run__conversation=conversation)
    return int(newest.aggregate(top=Max("id"))["top"] or 0)


def _comes_next(kept: Kept, conversation: Conversation, batch: Sequence[NewSnapshot]) -> bool:
    """Whether the batch extends the kept fold in recovery order, and the fold is the store's latest."""
    if conversation.snapshots_folded != kept.snapshots_folded:
        return False  # another process folded snapshots in meanwhile
    return _in_recovery_order(kept, batch)


def _in_recovery_order(kept: Kept, batch: Sequence[NewSnapshot]) -> bool:
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


CATCH_UP_SNAPSHOTS = 32
"""At most this many snapshots another process folded since this one kept a fold are folded into it; more, and the
conversation is recovered from scratch."""


def _order_key(new: NewSnapshot) -> tuple[tuple[datetime, int, str], SnapshotKey]:
    return (new.run.started_at, new.run.pk, new.run.run_id), new.key


@dataclass
class _Behind:
    """A conversation whose kept fold another process moved past, while it catches up."""

    conversation: Conversation
    kept: Kept
    snapshots: list[Snapshot] = field(default_factory=list)  # those another process stored since, by id
    start: int = 0  # where the snapshots' looked-up messages begin: after the fold's history, which they repeat
    changed_from: int = 0  # the first position the caught snapshots changed
    message_ids: list[int] = field(default_factory=list)  # the fold's messages' StoredMessage ids, caught up


def _catch_up(conversation: Conversation, kept: Kept, batch: Sequence[NewSnapshot]) -> bool:
    """`_catch_up_all` of one conversation."""
    return bool(_catch_up_all([_Behind(conversation, kept)], {new.snapshot.pk for new in batch}))


def _catch_up_all(behind: Sequence[_Behind], ours: set[int]) -> list[_Behind]:
    """Fold into each kept fold the snapshots another process stored (and wrote the rows of) since this one kept it
    (not `ours`, this write's own); those that caught up. The snapshots, the messages they name that the folds do
    not hold and the rows they left are read in one query each for all the conversations (an export of four runs
    catches four up).

    Two gunicorn workers taking a conversation's writes in turns would otherwise each recover it from scratch (every
    snapshot of every run) whenever the other wrote last. A fold catches up only when those snapshots (the newer ids,
    as a conversation's writers take turns on its lock) are as many as the conversation row counts, come after the
    kept fold in recovery order, and leave the fold's messages exactly the transcript rows the other process wrote
    for them (read from the first position they changed); the others must not be used (they may hold part of them).
    """
    behind = [
        b
        for b in behind
        if 0 < b.conversation.snapshots_folded - b.kept.snapshots_folded <= CATCH_UP_SNAPSHOTS
        and len(b.kept.fold.entries) == len(b.kept.message_ids)
    ]
    if not behind:
        return []
    tenant_id = behind[0].conversation.tenant_id
    by_pk = {b.conversation.pk: b for b in behind}
    newer = reduce(or_, (Q(run__conversation_id=b.conversation.pk, id__gt=b.kept.max_snapshot_id) for b in behind))
    for snapshot in (
        Snapshot.objects.filter(newer, tenant_id=tenant_id, run__tenant_id=tenant_id)
        .select_related("run")
        .only("seq", "step", "state", "message_ids", "run__run_id", "run__started_at", "run__conversation_id")
        .order_by("id")
    ):
        if snapshot.pk not in ours:
            by_pk[snapshot.run.conversation_id].snapshots.append(snapshot)
    behind = [b for b in behind if len(b.snapshots) == b.conversation.snapshots_folded - b.kept.snapshots_folded]
    for b in behind:
        # A thread's caught snapshots name the fold's history first, in order: only what follows it is looked up.
        held = len(b.kept.message_ids)
        b.start = held if all(s.message_ids[:held] == b.kept.message_ids for s in b.snapshots) else 0
    objects = _stored_objects(tenant_id, behind)
    caught = [b for b in behind if _fold_caught(b, objects)]
    if not caught:
        return []
    # The other process wrote the rows of the same snapshots folded after the same fold (its write counted them on
    # the conversation row, and they come after the fold in recovery order): from the first position they changed
    # on, its rows must be the fold's, and none past its end. Rows before it are the ones this fold's own write left,
    # as a fold that is not behind trusts them too (reading them all cost 2.4 ms at 1,000 messages).
    changed = reduce(or_, (Q(conversation_id=b.conversation.pk, position__gte=b.changed_from) for b in caught))
    written: dict[int, list[tuple[int, int]]] = {b.conversation.pk: [] for b in caught}
    for conversation_id, position, message_id in (
        TranscriptEntry.objects.filter(changed, tenant_id=tenant_id, summary_artifact=False)
        .order_by("conversation_id", "position")
        .values_list("conversation_id", "position", "message_id")
    ):
        written[conversation_id].append((position, message_id))
    caught = [
        b
        for b in caught
        if written[b.conversation.pk] == list(enumerate(b.message_ids[b.changed_from :], b.changed_from))
    ]
    for b in caught:
        kept, entries, held = b.kept, b.kept.fold.entries, len(b.kept.message_ids)
        if b.changed_from < held:  # a replaced message's id() may be reused: the map is made anew
            kept.stored_id_of = {
                id(e.message): message_id for e, message_id in zip(entries, b.message_ids, strict=True)
            }
        else:
            kept.stored_id_of.update(
                (id(e.message), message_id) for e, message_id in zip(entries[held:], b.message_ids[held:], strict=True)
            )
        kept.message_ids = b.message_ids
        kept.snapshots_folded = b.conversation.snapshots_folded
        kept.max_snapshot_id = max(snapshot.pk for snapshot in b.snapshots)
    return caught


def _stored_objects(tenant_id: int, behind: Sequence[_Behind]) -> dict[int, ModelMessage]:
    """The message of each StoredMessage id the caught snapshots name past their start: the fold's own object when
    they do not repeat its history (so they are looked up from the first), else the memo's, which the request's
    payload holds too if it carries the message (all conversations' read in one query)."""
    objects: dict[int, ModelMessage] = {}
    for b in behind:
        if not b.start:
            objects.update(zip(b.kept.message_ids, (entry.message for entry in b.kept.fold.entries), strict=True))
    named = {message_id for b in behind for s in b.snapshots for message_id in s.message_ids[b.start :]}
    missing = sorted(named - objects.keys())
    for at in range(0, len(missing), 2000):
        rows = StoredMessage.objects.filter(tenant_id=tenant_id, id__in=missing[at : at + 2000])
        for message_id, data in rows.values_list("id", "data"):
            objects[message_id] = MEMO.load(data)[0]
    return objects


def _fold_caught(b: _Behind, objects: Mapping[int, ModelMessage]) -> bool:
    """Fold the caught snapshots into `b.kept` and name their messages' ids, or False (the fold is then unusable)."""
    kept = b.kept
    entries = kept.fold.entries
    held = len(entries)
    if any(message_id not in objects for s in b.snapshots for message_id in s.message_ids[b.start :]):
        return False
    # The fold's messages now, held so that no id() of theirs is reused while this runs (the fold may replace some).
    before = [entry.message for entry in entries]
    head = before[: b.start]
    caught = sorted(
        (
            NewSnapshot(s.run, s, head + [objects[m] for m in s.message_ids[b.start :]], s.message_ids)
            for s in b.snapshots
        ),
        key=_order_key,
    )
    if not _in_recovery_order(kept, caught):
        return False
    b.changed_from = held
    for new in caught:
        change = kept.fold.apply(new.run.run_id, new.snapshot.state, new.messages)
        b.changed_from = min([b.changed_from, *change.replaced])
        kept.folded_runs.add(new.run.pk)
        kept.last = _order_key(new)
    stored_id_of = dict(kept.stored_id_of)
    for new in caught:
        stored_id_of.update(
            (id(m), sid) for m, sid in zip(new.messages[b.start :], new.stored_ids[b.start :], strict=True)
        )
    changed = entries[b.changed_from :]  # the entries before are the very objects, of the ids, the fold held
    _resolve_stored_ids(b.conversation, (entry.message for entry in changed), stored_id_of)
    b.message_ids = kept.message_ids[: b.changed_from] + [stored_id_of[id(entry.message)] for entry in changed]
    return True


def catch_up(conversations: Iterable[Conversation]) -> None:
    """Fold into this process's kept folds of the conversations the snapshots other processes stored since, before a
    write stores anything of them (under their locks), so that the write takes the ids of its history's messages
    from current folds; a fold that cannot catch up is dropped, and the write recovers from scratch."""
    behind = []
    for conversation in conversations:
        kept = fold_cache.peek(conversation)
        if kept is not None and kept.snapshots_folded != conversation.snapshots_folded:
            kept = fold_cache.take(conversation)
            if kept is not None:
                behind.append(_Behind(conversation, kept))
    for b in _catch_up_all(behind, set()):
        fold_cache.keep_after_commit(b.conversation, b.kept)


def update_transcript(
    conversation: Conversation,
    batch: Sequence[NewSnapshot],
    known: dict[int, ModelMessage] | None = None,
    prices: Mapping[str, NegotiatedPrice] | None = None,
) -> int:
    """Bring the transcript up to date after `batch` was stored; returns its length.

    When the batch comes next in recovery order and this process kept the conversation's fold, only the batch is
    folded and only the rows it changed are written; otherwise the conversation is recovered from scratch.
    """
    kept = fold_cache.take(conversation)
    ordered = sorted(batch, key=lambda n: ((n.run.started_at, n.run.pk, n.run.run_id), n.key))
    if kept is None and conversation.snapshots_folded == 0 and conversation.message_count == 0:
        # Nothing folded yet (a new conversation): the batch is all there is, so fold it from an empty fold
        # rather than read it back (an import's conversations all start here).
        kept = Kept(RecoveryFold(), stored_id_of={}, message_ids=[], snapshots_folded=0, folded_runs=set(), last=None)
    if prices is None:
        prices = list_columns.tenant_prices(conversation.tenant_id)
    if kept is None:
        return rebuild_transcript(conversation, known, prices)
    if conversation.snapshots_folded != kept.snapshots_folded and not _catch_up(conversation, kept, ordered):
        return rebuild_transcript(conversation, known, prices)
    if not _comes_next(kept, conversation, ordered):
        return rebuild_transcript(conversation, known, prices)
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
            kept.max_snapshot_id = max(kept.max_snapshot_id, new.snapshot.pk)
        batch_ids = {id(m): stored_id for n in ordered for m, stored_id in zip(n.messages, n.stored_ids, strict=True)}
        _write_changes(conversation, kept, changes, first, batch_ids, prices)
        kept.snapshots_folded += len(ordered)
        fold_cache.keep_after_commit(conversation, kept)
    return len(fold.entries)


def _write_changes(
    conversation: Conversation,
    kept: Kept,
    changes: Sequence[FoldChange],
    first: int,
    batch_ids: dict[int, int],
    prices: Mapping[str, NegotiatedPrice],
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
    new_messages: list[tuple[int, ModelMessage]] = []
    for change in changes:
        for artifact in change.artifacts:
            row = _Row(change.appended_from, run_pk[artifact.run_id], stored_id(artifact.message), False, True)
            new_rows.append(_entry(conversation, row, artifact.message))
    for position in sorted(rewritten) + list(range(first, len(fold.entries))):
        entry = fold.entries[position]
        row = _Row(position, run_pk[entry.run_id], stored_id(entry.message), fold.dropped(position), False)
        new_rows.append(_entry(conversation, row, entry.message))
        new_messages.append((position, entry.message))
        if position < first:
            kept.message_ids[position] = row.message_id
        else:
            kept.message_ids.append(row.message_id)
    entries = TranscriptEntry.objects.filter(
        tenant_id=conversation.tenant_id, conversation=conversation, summary_artifact=False
    )
    removed: list[tuple[int, str, dict[str, object]]] = []
    if rewritten:
        stale = list(entries.filter(position__in=rewritten).values_list("id", flat=True))
        removed = _removed_facts(conversation, stale)
        index.entries_removed(conversation.tenant_id, stale)
        TranscriptEntry.objects.filter(tenant_id=conversation.tenant_id, id__in=stale).delete()
    for value in (True, False):
        positions = [p for p, flag in flags.items() if flag is value and p not in rewritten]
        if positions:
            entries.filter(position__in=positions).update(recovered_from_compaction=value)
    # Artifacts first: at one position, an artifact was seen before the message that follows it.
    added = TranscriptEntry.objects.bulk_create(new_rows, batch_size=1000)
    if added:
        artifacts = [artifact.message for change in changes for artifact in change.artifacts]
        index.entries_added(added, artifacts + [message for _, message in new_messages])
    list_columns.note_rows(conversation, removed, added, new_messages, prices)
    stamps = [e.timestamp for e in added if e.timestamp]
    last_activity = max([conversation.updated_at, *stamps])
    folded = kept.snapshots_folded + len(changes)
    Conversation.objects.filter(tenant_id=conversation.tenant_id, pk=conversation.pk).update(
        message_count=len(fold.entries), updated_at=last_activity, snapshots_folded=folded
    )
    conversation.message_count, conversation.updated_at = len(fold.entries), last_activity
    conversation.snapshots_folded = folded


def delete_conversations(conversations: QuerySet[Conversation]) -> int:
    """Delete conversations with their runs, snapshots, transcript, index entries and now-unreferenced messages:
    those their snapshots reference and those recovery derived for their transcripts (a summary split from its
    turn), kept while another conversation's snapshot or transcript still names them."""
    with transaction.atomic():
        rows = list(conversations.values_list("id", "tenant_id"))
        if not rows:
            return 0
        ids = [cid for cid, _ in rows]
        candidates: dict[int, set[int]] = {}
        for tenant_id in {tid for _, tid in rows}:
            entries = dict(
                TranscriptEntry.objects.filter(tenant_id=tenant_id, conversation_id__in=ids).values_list(
                    "id", "message_id"
                )
            )
            if entries:
                index.entries_removed(tenant_id, list(entries))
            referenced = SnapshotMessage.objects.filter(tenant_id=tenant_id, snapshot__run__conversation_id__in=ids)
            candidates[tenant_id] = {*entries.values(), *referenced.values_list("message_id", flat=True)}
        Conversation.objects.filter(id__in=ids).delete()
        for tenant_id, messages in candidates.items():
            still_used = {
                *SnapshotMessage.objects.filter(tenant_id=tenant_id, message_id__in=messages).values_list(
                    "message_id", flat=True
                ),
                *TranscriptEntry.objects.filter(tenant_id=tenant_id, message_id__in=messages).values_list(
                    "message_id", flat=True
                ),
            }
            StoredMessage.objects.filter(tenant_id=tenant_id, id__in=messages - still_used).delete()
        return len(ids)
