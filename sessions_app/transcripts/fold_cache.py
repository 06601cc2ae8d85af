"""The recovery folds this process keeps, so the next snapshot of a conversation is folded instead of recovered again.

Three calls: `take` the conversation's fold (one this transaction wrote, else one committed), `keep_after_commit` the
fold a write leaves (for this transaction's next write at once, for every thread once it commits), `forget_all`; and
`peek`, which looks at a fold without taking it (`stored_ids_of_kept`: ingestion's ids of messages it holds).
A fold is keyed by the database and the conversation's identity, and the cache holds at most
`SESSIONDESK_RECOVERY_CACHE_MESSAGES` messages, forgetting the least recently written folds first.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction

from sessions_app.models import Conversation
from sessions_app.transcripts.recovery.fold import RecoveryFold
from sessions_app.transcripts.run_inputs import SnapshotKey


@dataclass
class Kept:
    """A conversation's recovery as this process last wrote it."""

    fold: RecoveryFold
    stored_id_of: dict[int, int]  # id(message) -> StoredMessage id; the fold holds every such message alive
    message_ids: list[int]  # position -> StoredMessage id, as written
    snapshots_folded: int  # as written on the conversation row: another process's write changes it
    folded_runs: set[int]  # run pks
    last: tuple[tuple[datetime, int, str], SnapshotKey] | None  # the last run folded and its last snapshot
    messages_held: int = field(default=0)
    max_snapshot_id: int = field(default=0)  # the newest snapshot folded: another process's are newer


_KeptKey = tuple[str, int, str, datetime]

_kept: OrderedDict[_KeptKey, Kept] = OrderedDict()  # folds of committed writes, shared by the process's threads
_kept_lock = threading.Lock()


@dataclass
class _Pending:
    """A fold written by this thread's open transaction; `marker` is the on-commit callback of its last write."""

    kept: Kept
    marker: Callable[[], None]

    @property
    def messages_held(self) -> int:
        return self.kept.messages_held


class _OpenFolds(threading.local):
    def __init__(self) -> None:
        self.folds: OrderedDict[_KeptKey, _Pending] = OrderedDict()


# Folds of writes not yet committed, so that the next batch of the same transaction (an import's next chunk) goes
# on from them instead of recovering from scratch. Per thread: a connection belongs to one thread.
_open = _OpenFolds()


def _kept_key(conversation: Conversation) -> _KeptKey:
    # The creation time too: a conversation deleted and made again may get the same primary key on SQLite.
    return (connection.alias, conversation.pk, conversation.external_id, conversation.created_at)


def _within_limit[Fold: (Kept, _Pending)](folds: OrderedDict[_KeptKey, Fold]) -> None:
    """Forget the least recently written folds beyond the messages a process may hold."""
    limit = settings.SESSIONDESK_RECOVERY_CACHE_MESSAGES
    held = sum(fold.messages_held for fold in folds.values())
    while folds and held > limit:
        held -= folds.popitem(last=False)[1].messages_held


def take(conversation: Conversation) -> Kept | None:
    """The conversation's fold, taken out of the cache (the caller keeps it again after its write), or None."""
    key = _kept_key(conversation)
    pending = _open.folds.pop(key, None)
    # A write's marker leaves the on-commit list when its transaction (or savepoint) rolls back: its fold would be
    # ahead of the rows, so it is dropped and the committed fold (if any) is the one to go on from.
    if pending is not None and any(entry[1] is pending.marker for entry in connection.run_on_commit):
        return pending.kept
    with _kept_lock:
        return _kept.pop(key, None)


def peek(conversation: Conversation) -> Kept | None:
    """The conversation's fold left where it is (`take` would take it), or None; current only when its
    `snapshots_folded` is the conversation row's (read under the conversation's lock)."""
    key = _kept_key(conversation)
    pending = _open.folds.get(key)
    if pending is not None and any(entry[1] is pending.marker for entry in connection.run_on_commit):
        return pending.kept
    with _kept_lock:
        return _kept.get(key)


def stored_ids_of_kept(conversation: Conversation) -> Mapping[int, int]:
    """StoredMessage id by id() of each message of the conversation's fold, when the fold is the store's latest
    (read under the conversation's lock): its transcript rows reference these, so they exist while the lock is held;
    else {}. The fold's own map, to be read, not changed: at 5,000 runs in one conversation a new dict of the
    fold's entries cost 20 ms of every write."""
    kept = _current(conversation)
    return kept.stored_id_of if kept is not None and len(kept.fold.entries) == len(kept.message_ids) else {}


def newest_snapshot_folded(conversation: Conversation) -> int | None:
    """The id of the newest snapshot the conversation's fold folded, when the fold is the store's latest (read under
    the conversation's lock), so the conversation's newest snapshot; else None."""
    kept = _current(conversation)
    return (kept.max_snapshot_id or None) if kept is not None else None


def _current(conversation: Conversation) -> Kept | None:
    """The conversation's fold when it has folded every snapshot the row counts (read under its lock), else None."""
    kept = peek(conversation)
    return kept if kept is not None and kept.snapshots_folded == conversation.snapshots_folded else None


def keep_after_commit(conversation: Conversation, kept: Kept) -> None:
    """Keep the fold for this transaction's next write, and for everyone's once it commits."""
    key = _kept_key(conversation)
    kept.messages_held = len(kept.fold.entries) + kept.fold.snapshots_folded
    pending = _open.folds

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


def forget_all() -> None:
    """Forget every committed fold and this thread's pending ones: the next write of each conversation recovers."""
    with _kept_lock:
        _kept.clear()
    _open.folds.clear()
