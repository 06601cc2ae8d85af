"""Snapshots in: store content-addressed, re-recover the transcript, index, audit. One transaction per batch.

`ingest_snapshots` is the one place that orchestrates an ingest, and the one service function the API, the live
adapter, the importers and the demo seed call, with payloads parsed by `sessions_app.ingest.payloads`.
"""

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import Max
from django.utils import timezone

from model_messages.serialization import dump_message
from sessions_app.audit.principals import claim_conversation, principal_hash
from sessions_app.audit.service import History, audit_runs
from sessions_app.ingest.message_memo import MEMO
from sessions_app.ingest.payloads import (
    IngestError,
    RuntimeSpanPayload,
    SnapshotPayload,
    ToolEffectPayload,
    check_snapshot_size,
    is_final,
    last_stamp,
    run_start,
)
from sessions_app.ingest.storage import existing_message_ids, store_messages
from sessions_app.models import (
    ApiKey,
    Conversation,
    Run,
    RunState,
    RuntimeSpan,
    Snapshot,
    SnapshotMessage,
    Source,
    Tenant,
    ToolEffect,
)
from sessions_app.tenancy.api_keys import refuse_foreign_writes
from sessions_app.tenancy.bulk_update import update_rows
from sessions_app.tenancy.scoping import runs_with_conversation, scoped
from sessions_app.transcripts import fold_cache, list_columns
from sessions_app.transcripts.recovery.hashing import message_hash
from sessions_app.transcripts.runtime_spans import ANSWER_KINDS, Answer, answers_in_history, store_decisions
from sessions_app.transcripts.store import NewSnapshot, catch_up, update_transcript

logger = logging.getLogger(__name__)
WRITE_ATTEMPTS = 5
# SQLite has one writer and no row locks: a process's writers queue here (another process waits on the file's
# busy timeout), so identical writes at the same moment take turns and the second finds the first's snapshot.
_sqlite_writer = threading.Lock()


def one_writer() -> AbstractContextManager[object]:
    """SQLite has one writer at a time: this process's writers take turns (PostgreSQL locks rows instead)."""
    return _sqlite_writer if connection.vendor == "sqlite" else nullcontext()


@dataclass
class IngestResult:
    created: list[int] = field(default_factory=list)
    repeated: list[int] = field(default_factory=list)
    runs: set[str] = field(default_factory=set)
    conversations: set[str] = field(default_factory=set)
    new_messages: int = 0
    tool_effects: int = 0

    def add(self, other: "IngestResult") -> None:
        self.created += other.created
        self.repeated += other.repeated
        self.runs |= other.runs
        self.conversations |= other.conversations
        self.new_messages += other.new_messages
        self.tool_effects += other.tool_effects


@dataclass(frozen=True)
class _Prepared:
    payload: SnapshotPayload
    dumped: list[str]
    shas: list[str]
    content_hashes: list[str]
    digest: str


def _leading_found[T](found: list[T | None]) -> list[T]:
    """What was found before the first miss (a step's repeated messages lead its history)."""
    head = found.index(None) if None in found else len(found)
    return cast(list[T], found[:head])


def _prepare(payload: SnapshotPayload) -> _Prepared:
    """Each message's bytes and hashes: kept ones from the memo, the others dumped and hashed here."""
    kept = MEMO.of_each(payload.messages)
    # The kept messages a step repeats come first: taken in one pass each, then the rest one by one.
    repeated = _leading_found(kept)
    head = len(repeated)
    dumped = [known.dumped for known in repeated]
    shas = [known.sha256 for known in repeated]
    content_hashes = [known.content_hash for known in repeated]
    for message, known in zip(payload.messages[head:], kept[head:], strict=True):
        if known is None:
            data = dump_message(message)
            dumped.append(data)
            shas.append(hashlib.sha256(data.encode()).hexdigest())
            content_hashes.append(message_hash(message))
        else:
            dumped.append(known.dumped)
            shas.append(known.sha256)
            content_hashes.append(known.content_hash)
    return _Prepared(
        payload=payload,
        dumped=dumped,
        shas=shas,
        content_hashes=content_hashes,
        digest=payload.sent_digest or hashlib.sha256("\n".join(shas).encode()).hexdigest(),
    )


def _store_messages(
    tenant: Tenant,
    prepared: Sequence[_Prepared],
    runs: Mapping[str, Run],
    known_ids: Mapping[int, int],
) -> tuple[dict[str, int], int]:
    """Ids of the StoredMessage rows for every message, inserting only those this tenant never stored.

    A message already stored is not looked up by its sha256 when its id is known: a message of its conversation's
    fold (caught up under the conversation's lock before this, so its rows are the locked transcript's, and the
    memo handed the payload the fold's objects), or one the caller read from the stored transcript (`known_ids`,
    checked to exist in one query by primary key); both by id() of the payload's message object. A long history
    repeated each step then reads back only its new messages.
    """
    # The folds' own maps, not merged (a fold's map holds the whole history, and copying it cost more than the new
    # messages); each payload looks in its own conversation's first, with dict.get (ChainMap's lookups cost 3 % of
    # a BatchSpanProcessor export of four 1,000-message histories).
    folds = {
        conversation.pk: fold_cache.stored_ids_of_kept(conversation)
        for conversation in _conversations_of(prepared, runs)
    }
    ids: dict[str, int] = {}
    claimed: dict[str, int] = {}
    wanted: dict[str, tuple[str, str]] = {}
    for item in prepared:
        own = runs[item.payload.run_id].conversation_id
        # A step of a thread: its fold holds every message it repeats, so those ids are taken in one pass.
        in_fold = list(map(folds[own].get, map(id, item.payload.messages)))
        repeated = _leading_found(in_fold)
        head = len(repeated)
        ids.update(zip(item.shas[:head], repeated, strict=True))
        maps = [folds[own], *(ids_of for pk, ids_of in folds.items() if pk != own)]
        for sha, content_hash, dumped, message in zip(
            item.shas[head:], item.content_hashes[head:], item.dumped[head:], item.payload.messages[head:], strict=True
        ):
            if sha in ids or sha in claimed or sha in wanted:
                continue
            if (message_id := _found_in(maps, id(message))) is not None:
                ids[sha] = message_id
            elif (message_id := known_ids.get(id(message))) is not None:
                claimed[sha] = message_id
                wanted[sha] = (content_hash, dumped)
            else:
                wanted[sha] = (content_hash, dumped)
    if claimed:
        existing = existing_message_ids(tenant.id, claimed.values())
        for sha, message_id in claimed.items():
            if message_id in existing:
                ids[sha] = message_id
                del wanted[sha]
    found, inserted = store_messages(tenant.id, wanted)
    ids.update(found)
    return ids, inserted


def _found_in(maps: Sequence[Mapping[int, int]], key: int) -> int | None:
    for ids_of in maps:
        if (found := ids_of.get(key)) is not None:
            return found
    return None


def _conversations_of(prepared: Sequence[_Prepared], runs: Mapping[str, Run]) -> list[Conversation]:
    by_pk = {runs[item.payload.run_id].conversation_id: runs[item.payload.run_id].conversation for item in prepared}
    return list(by_pk.values())


def _lock_conversations(tenant: Tenant, external_ids: Iterable[str]) -> dict[str, Conversation]:
    """The batch's conversations, created if new, each locked until the transaction ends.

    Writers to one conversation serialize here; others proceed in parallel. Locks are taken in one order (by
    external id) so two batches naming the same conversations cannot deadlock; a conversation two writers
    create at once is inserted once (the other insert is ignored) and then locked by both in turn.
    """
    wanted = sorted(set(external_ids))
    if not wanted:
        return {}
    Conversation.objects.bulk_create(
        [Conversation(tenant=tenant, external_id=external_id) for external_id in wanted],
        batch_size=500,
        ignore_conflicts=True,
    )
    locked = Conversation.objects.select_for_update().filter(tenant=tenant, external_id__in=wanted)
    return {conversation.external_id: conversation for conversation in locked.order_by("external_id")}


def _runs_for(
    tenant: Tenant, prepared: Sequence[_Prepared], conversations: dict[str, Conversation], source: str
) -> dict[str, Run]:
    """Every run the batch names, existing or created; 409 for a run id of another conversation."""
    wanted: dict[str, SnapshotPayload] = {}
    for item in prepared:
        wanted.setdefault(item.payload.run_id, item.payload)
    Run.objects.bulk_create(
        [
            Run(
                tenant=tenant,
                conversation=conversations[payload.conversation_id],
                run_id=payload.run_id,
                agent_name=payload.agent,
                parent_run_id=payload.parent_run_id,
                source=Source.CLIENT if payload.client_supplied else source,
                started_at=payload.started_at or run_start(payload.messages) or timezone.now(),
            )
            for payload in wanted.values()
        ],
        batch_size=500,
        ignore_conflicts=True,  # a run stored before keeps what it has; another conversation's is a 409 below
    )
    runs: dict[str, Run] = {}
    for start in range(0, len(wanted), 500):
        chunk = list(wanted)[start : start + 500]
        runs_with_conversations = Run.objects.select_related("conversation").filter(
            tenant=tenant, conversation__tenant=tenant, run_id__in=chunk
        )
        for run in runs_with_conversations:
            runs[run.run_id] = run
    for item in prepared:
        run = runs[item.payload.run_id]
        if run.conversation.external_id != item.payload.conversation_id:
            raise IngestError(
                f"Run '{item.payload.run_id}' already belongs to conversation '{run.conversation.external_id}', "
                f"not '{item.payload.conversation_id}'.",
                status=409,
            )
    return runs


def _known_snapshots(tenant: Tenant, runs: Iterable[Run]) -> dict[tuple[object, ...], int]:
    """Identities of the runs' stored snapshots: ("key", run, idempotency key) and ("content", run, step, state,
    digest), each to the snapshot id, so a repeat is found without a query per snapshot."""
    known: dict[tuple[object, ...], int] = {}
    run_ids = [run.id for run in runs if run.id is not None]
    for start in range(0, len(run_ids), 500):
        rows = Snapshot.objects.filter(tenant=tenant, run_id__in=run_ids[start : start + 500]).values_list(
            "id", "run_id", "idempotency_key", "step", "state", "digest"
        )
        for snapshot_id, run_id, key, step, state, digest in rows:
            if key:
                known.setdefault(("key", run_id, key), snapshot_id)
            known.setdefault(("content", run_id, step, state, digest), snapshot_id)
    return known


def _identities(run: Run, item: _Prepared) -> list[tuple[object, ...]]:
    identities: list[tuple[object, ...]] = [("content", run.id, item.payload.step, item.payload.state, item.digest)]
    if item.payload.idempotency_key:
        identities.insert(0, ("key", run.id, item.payload.idempotency_key))
    return identities


# What a tool-effect row copies from its record: all of it but the call's identity, so a call seen again updates it.
_EFFECT_FIELDS = ("tool_name", "status", "started_at", "ended_at")


def _store_runtime_spans(tenant: Tenant, spans: Sequence[RuntimeSpanPayload], runs: dict[str, Run]) -> None:
    """The export's compaction, approval-review and judgement spans of the batch's runs; a span sent again
    (the same trace and span id) is not stored twice."""
    RuntimeSpan.objects.bulk_create(
        [
            RuntimeSpan(
                tenant=tenant,
                run=runs[span.run_id],
                span_key=span.span_key,
                kind=span.kind,
                started_at=span.started_at,
                ended_at=span.ended_at,
                facts=span.facts,
            )
            for span in spans
            if span.run_id in runs
        ],
        batch_size=1000,
        ignore_conflicts=True,
    )


def _apply_tool_effects(tenant: Tenant, effects: Sequence[ToolEffectPayload], runs: dict[str, Run]) -> int:
    """Record the harness's tool-effect ledger in one statement per thousand calls; a call seen again is updated."""
    unknown = {effect.run_id for effect in effects} - runs.keys()
    for start in range(0, len(unknown), 500):
        chunk = sorted(unknown)[start : start + 500]
        runs.update({run.run_id: run for run in Run.objects.filter(tenant=tenant, run_id__in=chunk)})
    latest: dict[tuple[str, str], ToolEffectPayload] = {}
    for effect in effects:
        if effect.run_id not in runs:
            raise IngestError(f"Tool effect for unknown run '{effect.run_id}'.", status=404)
        latest[(effect.run_id, effect.tool_call_id)] = effect  # the last record of a call wins, as it was written
    rows = [
        ToolEffect(
            tenant=tenant,
            run=runs[effect.run_id],
            tool_call_id=effect.tool_call_id,
            **{name: getattr(effect, name) for name in _EFFECT_FIELDS},
        )
        for effect in latest.values()
    ]
    ToolEffect.objects.bulk_create(
        rows,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["tenant", "run", "tool_call_id"],
        update_fields=list(_EFFECT_FIELDS),
    )
    return len(effects)


def ingest_snapshots(
    tenant: Tenant,
    payloads: Sequence[SnapshotPayload],
    *,
    source: str,
    via: str,
    tool_effects: Sequence[ToolEffectPayload] = (),
    runtime_spans: Sequence[RuntimeSpanPayload] = (),
    api_key: ApiKey | None = None,
    also: Callable[[], object] | None = None,
    known_ids: Mapping[int, int] | None = None,
) -> IngestResult:
    """Store snapshots (and tool-effect records) in one transaction, then re-recover and re-audit what changed.

    `source` is the authority of whoever handed the history over (a `client` key can never claim `server`);
    anything raises IngestError and leaves the database as it was. `api_key` is the key that wrote the batch
    (None for imports); a snapshot's principal is stored as a keyed hash and claims an unowned conversation.
    `also` runs last in the same transaction (and again on a retry): the OTLP door's pending spans. `known_ids`:
    StoredMessage ids the caller read from the stored transcript, by id() of the payloads' message objects.
    """
    for payload in payloads:
        check_snapshot_size(payload, settings.SESSIONDESK_MAX_SNAPSHOT_MESSAGES)
    prepared = [_prepare(payload) for payload in payloads]
    if connection.in_atomic_block:
        # Part of a caller's transaction (seed_demo): a failed attempt cannot be retried on its own.
        return _ingest(tenant, prepared, source, via, tool_effects, api_key, runtime_spans, also, known_ids or {})
    for attempt in range(WRITE_ATTEMPTS):
        try:
            return _ingest(tenant, prepared, source, via, tool_effects, api_key, runtime_spans, also, known_ids or {})
        except (OperationalError, IntegrityError) as error:
            # A locked SQLite database, a PostgreSQL deadlock or serialization failure, or a unique key another
            # writer took between our read and our write: the transaction rolled back whole, so try again.
            logger.info("ingest attempt %d rolled back: %s", attempt + 1, type(error).__name__)
            time.sleep(0.05 * (attempt + 1))
    raise IngestError("The store is busy; nothing was written. Try again.", status=503)


@dataclass
class _Stored:
    """The batch's new snapshots as stored (rows in the order of `fresh`), the runs they touched, each run's latest."""

    fresh: list[_Prepared]
    message_ids: dict[str, int]  # StoredMessage id by sha256
    snapshots: list[Snapshot] = field(default_factory=list)
    touched_runs: dict[int, Run] = field(default_factory=dict)
    latest: dict[int, _Prepared] = field(default_factory=dict)  # by run: the batch's snapshot that is now its latest


def _ingest(
    tenant: Tenant,
    prepared: Sequence[_Prepared],
    source: str,
    via: str,
    tool_effects: Sequence[ToolEffectPayload],
    api_key: ApiKey | None,
    runtime_spans: Sequence[RuntimeSpanPayload] = (),
    also: Callable[[], object] | None = None,
    known_ids: Mapping[int, int] | None = None,
) -> IngestResult:
    """One attempt, one transaction: find the runs, store what is new, recover (which writes the index), audit."""
    result = IngestResult()
    with one_writer(), transaction.atomic():
        runs = _locked_runs(tenant, prepared, tool_effects, source, api_key)
        fresh = _fresh(tenant, prepared, runs, result)
        catch_up(_conversations_of(fresh, runs))  # another worker's writes: the folds name the history's ids
        message_ids, result.new_messages = _store_messages(tenant, fresh, runs, known_ids or {})
        stored = _store_snapshots(tenant, _Stored(fresh, message_ids), runs, source, via, api_key)
        result.created = [snapshot.id for snapshot in stored.snapshots]
        result.tool_effects = _apply_tool_effects(tenant, tool_effects, runs)
        _store_runtime_spans(tenant, runtime_spans, runs)
        if tool_effects:
            stored.touched_runs.update({run.id: run for run in runs.values()})
        update_rows(
            Run,
            tenant.pk,
            list(stored.touched_runs.values()),
            ["source", "agent_name", "state", "finished_at", *list_columns.RUN_COLUMNS],
        )
        _recover(tenant, stored)
        list_columns.note_runs(tenant, {run.conversation_id for run in stored.touched_runs.values()})
        _audit(tenant, stored, runtime_spans)
        if also is not None:
            also()
    return result


def _locked_runs(
    tenant: Tenant,
    prepared: Sequence[_Prepared],
    tool_effects: Sequence[ToolEffectPayload],
    source: str,
    api_key: ApiKey | None,
) -> dict[str, Run]:
    """Every run the batch names, by run id, its conversation (and those of the tool effects' runs) locked; 403
    for a client key writing to a conversation that holds history it did not write."""
    effect_conversations = Run.objects.filter(
        tenant=tenant, run_id__in={effect.run_id for effect in tool_effects}, conversation__tenant=tenant
    ).values_list("conversation__external_id", flat=True)
    conversations = _lock_conversations(
        tenant, [*(item.payload.conversation_id for item in prepared), *effect_conversations]
    )
    refuse_foreign_writes(api_key, conversations.values())
    return _runs_for(tenant, prepared, conversations, source)


def _fresh(
    tenant: Tenant, prepared: Sequence[_Prepared], runs: dict[str, Run], result: IngestResult
) -> list[_Prepared]:
    """The snapshots not stored before (nor earlier in this batch); repeats are noted in `result`."""
    known = _known_snapshots(tenant, runs.values())
    fresh: list[_Prepared] = []
    for item in prepared:
        run = runs[item.payload.run_id]
        result.runs.add(run.run_id)
        result.conversations.add(item.payload.conversation_id)
        identities = _identities(run, item)
        repeat_of = next((known[i] for i in identities if i in known), None)
        if repeat_of is not None:
            if repeat_of > 0:
                result.repeated.append(repeat_of)
            continue
        for identity in identities:
            known[identity] = 0  # a later copy in this same batch is a repeat too
        fresh.append(item)
    return fresh


def _store_snapshots(
    tenant: Tenant, stored: _Stored, runs: dict[str, Run], source: str, via: str, api_key: ApiKey | None
) -> _Stored:
    """Insert the fresh snapshots after each run's last, their message references, and note each on its run."""
    next_seq, top_step = _run_tops(tenant, [runs[item.payload.run_id] for item in stored.fresh])
    for item in stored.fresh:
        run = runs[item.payload.run_id]
        next_seq[run.id] = next_seq.get(run.id, 0) + 1
        stored.snapshots.append(
            _snapshot_row(tenant, run, item, stored.message_ids, next_seq[run.id], source, via, api_key)
        )
        step, stored_step = item.payload.step, top_step.get(run.id)
        if step is None or stored_step is None or step >= stored_step:
            # The latest step decides the run's state; a late earlier step changes only the transcript.
            top_step[run.id] = step if step is not None else stored_step
            latest = last_stamp(item.payload.messages)
            _note_snapshot_on_run(run, item.payload, latest)
            list_columns.note_run_snapshot(run, latest, timezone.now())
            stored.latest[run.id] = item
        stored.touched_runs[run.id] = run
    named = _named_by_newest(tenant, _conversations_of(stored.fresh, runs))
    Snapshot.objects.bulk_create(stored.snapshots, batch_size=500)
    _insert_references(tenant, stored.snapshots, named)
    return stored


def _insert_references(tenant: Tenant, snapshots: Sequence[Snapshot], named: dict[int, set[int]]) -> None:
    """The `SnapshotMessage` rows of the fresh snapshots (their order is on their rows, `Snapshot.message_ids`): a
    row only for a message its conversation's newest snapshot before it (`named`, by conversation) did not name.
    Every message that snapshot names has a row in the conversation already, so a client sending its whole history
    each step writes rows for its new messages (four runs of a 1,000-message thread wrote 4,000 rows, 25 to 33 ms
    of the export)."""
    rows: list[tuple[int, int, int]] = []  # (snapshot, position, message)
    for snapshot in snapshots:
        ids: list[int] = snapshot.message_ids
        names = set(ids)
        # Each message not named before, at its first position (a few per step: found by set, then by index).
        fresh = names.difference(named.get(snapshot.run.conversation_id, ()))
        rows.extend(sorted((snapshot.pk, ids.index(message_id), message_id) for message_id in fresh))
        named[snapshot.run.conversation_id] = names  # the batch's next snapshot comes after
    if not rows:
        return
    if connection.vendor != "postgresql":
        SnapshotMessage.objects.bulk_create(
            [SnapshotMessage(tenant=tenant, snapshot_id=s, position=p, message_id=m) for s, p, m in rows],
            batch_size=2000,
        )
        return
    # An import's first snapshots name every message: one statement, each column as one comma-separated string
    # (a model object per row cost 1.5 s of the 1,000-run threaded import, and psycopg quotes an array's elements
    # one by one).
    table = SnapshotMessage._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (tenant_id, snapshot_id, position, message_id)"  # noqa: S608 - the model's table, bound values
            " SELECT %s, s, p, m FROM unnest(string_to_array(%s, ',')::bigint[],"
            " string_to_array(%s, ',')::integer[], string_to_array(%s, ',')::bigint[]) AS r(s, p, m)",
            [tenant.id, *(",".join(map(str, column)) for column in zip(*rows, strict=True))],
        )


def _named_by_newest(tenant: Tenant, conversations: Iterable[Conversation]) -> dict[int, set[int]]:
    """The messages each conversation's newest stored snapshot names, by conversation pk (none for a new one).
    The newest is the one the conversation's current fold folded last (under the conversation's lock), or else
    the highest id of its snapshots."""
    newest: dict[int, int] = {}
    unknown = []
    for conversation in conversations:
        if folded := fold_cache.newest_snapshot_folded(conversation):
            newest[conversation.pk] = folded
        else:
            unknown.append(conversation.pk)
    if unknown:
        newest.update(
            Snapshot.objects.filter(tenant=tenant, run__tenant=tenant, run__conversation_id__in=unknown)
            .order_by()
            .values("run__conversation_id")
            .annotate(top=Max("id"))
            .values_list("run__conversation_id", "top")
        )
    names = dict(Snapshot.objects.filter(tenant=tenant, id__in=newest.values()).values_list("id", "message_ids"))
    return {conversation: set(names.get(snapshot, ())) for conversation, snapshot in newest.items()}


def _snapshot_row(
    tenant: Tenant,
    run: Run,
    item: _Prepared,
    message_ids: Mapping[str, int],
    seq: int,
    source: str,
    via: str,
    api_key: ApiKey | None,
) -> Snapshot:
    """The snapshot's row (not saved yet); its principal claims an unowned conversation."""
    snapshot_source = Source.CLIENT if item.payload.client_supplied else source
    principal = principal_hash(tenant.id, item.payload.principal)
    claim_conversation(run.conversation, principal)
    if snapshot_source == Source.CLIENT:
        run.source = Source.CLIENT  # one client-supplied snapshot taints the whole run
    return Snapshot(
        tenant=tenant,
        run=run,
        seq=seq,
        step=item.payload.step,
        state=item.payload.state,
        source=snapshot_source,
        via=via,
        idempotency_key=item.payload.idempotency_key,
        digest=item.digest,
        message_count=len(item.shas),
        message_ids=[message_ids[sha] for sha in item.shas],
        api_key=api_key,
        principal_hash=principal,
    )


def _run_tops(tenant: Tenant, runs: Sequence[Run]) -> tuple[dict[int, int], dict[int, int | None]]:
    """Each run's highest stored seq and step (by run pk), for runs with snapshots."""
    next_seq: dict[int, int] = {}
    top_step: dict[int, int | None] = {}
    for run_pk, seq, step in (
        Snapshot.objects.filter(tenant=tenant, run_id__in=[run.id for run in runs])
        .values("run_id")
        .annotate(top=Max("seq"), top_step=Max("step"))
        .values_list("run_id", "top", "top_step")
    ):
        next_seq[run_pk], top_step[run_pk] = seq, step
    return next_seq, top_step


def _recover(tenant: Tenant, stored: _Stored) -> None:
    """Bring the transcript (and with it the search index) of every conversation with new snapshots up to date.

    Tool effects change no transcript: only conversations with new snapshots are recovered.
    """
    validated = {
        stored.message_ids[sha]: message
        for item in stored.fresh
        for sha, message in zip(item.shas, item.payload.messages, strict=True)
    }
    by_conversation: dict[int, list[NewSnapshot]] = {}
    for snapshot, item in zip(stored.snapshots, stored.fresh, strict=True):
        stored_ids = [stored.message_ids[sha] for sha in item.shas]
        by_conversation.setdefault(snapshot.run.conversation_id, []).append(
            NewSnapshot(snapshot.run, snapshot, item.payload.messages, stored_ids)
        )
    prices = list_columns.tenant_prices(tenant)
    for batch in by_conversation.values():
        update_transcript(batch[0].run.conversation, batch, validated, prices)


def _answers(tenant: Tenant, stored: _Stored, conversations: set[int]) -> list[Answer]:
    """The tool results and retry prompts of the batch's new snapshots that answer a call still waiting for a
    decision in `conversations` (as `store_decisions` looks them up): the answers a waiting run may get, read from
    the messages just stored (never from the conversation's history). The waiting calls are read first: almost no
    conversation has one, and a long history carries many answers, so its messages are looked at only then (at
    1,000 messages, reading every part of every run's history cost 6 ms a run)."""
    waiting = {
        str(facts.get("tool_call_id"))
        for facts in scoped(RuntimeSpan, tenant)
        .filter(run__tenant=tenant, run__conversation_id__in=conversations, kind=RuntimeSpan.Kind.APPROVAL_PENDING)
        .exclude(facts__has_key="state")
        .values_list("facts", flat=True)
        if isinstance(facts, dict)
    }
    if not waiting:
        return []
    answers = []
    for snapshot, item in zip(stored.snapshots, stored.fresh, strict=True):
        run = snapshot.run
        for message, dumped in zip(item.payload.messages, item.dumped, strict=True):
            calls = {
                str(call)
                for part in message.parts
                if getattr(part, "part_kind", "") in ANSWER_KINDS and (call := getattr(part, "tool_call_id", None))
            }
            if calls & waiting:
                data = json.loads(dumped)
                timestamp = getattr(message, "timestamp", None)
                answers += [Answer(c, run.pk, run.run_id, run.started_at, timestamp, data) for c in sorted(calls)]
    return answers


def _audit(tenant: Tenant, stored: _Stored, runtime_spans: Sequence[RuntimeSpanPayload]) -> None:
    """Audit every run the batch touched, each run's latest snapshot of the batch as its history."""
    histories = {
        run_pk: History(tuple(item.dumped), list(item.payload.messages)) for run_pk, item in stored.latest.items()
    }
    runs = list(stored.touched_runs.values())
    conversations = {run.conversation_id for run in runs}
    # A continuation answers the approval an earlier run ended waiting on: the decision is stored once, from the
    # batch's new answers, and only the runs it decides are audited again.
    decided = store_decisions(tenant, conversations, _answers(tenant, stored, conversations))
    # A pending span that came in after its answer (an export sent late) looks its answer up once, on arrival.
    late = {span.run_id for span in runtime_spans if span.kind == RuntimeSpan.Kind.APPROVAL_PENDING}
    for run in scoped(Run, tenant).filter(run_id__in=late).select_related("tenant"):
        decided |= store_decisions(tenant, {run.conversation_id}, answers_in_history(run))
    waiting = list(runs_with_conversation(tenant).filter(pk__in=decided - stored.touched_runs.keys()))
    audit_runs(tenant, runs + waiting, histories=histories)


def _note_snapshot_on_run(run: Run, payload: SnapshotPayload, latest: datetime | None) -> None:
    """The run's latest snapshot decides its state and agent; `latest`: its messages' `last_stamp`."""
    if payload.agent and not run.agent_name:
        run.agent_name = payload.agent
    run.finished_at = None
    if payload.state == "interrupted":
        run.state = RunState.INTERRUPTED
    elif is_final(payload.messages):
        run.state = RunState.COMPLETE
        run.finished_at = latest or timezone.now()
    else:
        run.state = RunState.RUNNING
