"""Snapshots in: validate, store content-addressed, re-recover the transcript, audit. One transaction per batch.

`parse_snapshot` is pure (plain data in, a `SnapshotPayload` or an `IngestError` out); `ingest_snapshots` is the
one service function the API, the live adapter, the importer and the demo seed all call.
"""

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart

from sessions_app.core.input_errors import RejectedInput
from sessions_app.core.recovery import message_hash
from sessions_app.core.serialization import dump_message, validate_messages
from sessions_app.models import (
    Conversation,
    Run,
    RunState,
    Snapshot,
    SnapshotMessage,
    Source,
    StoredMessage,
    Tenant,
    ToolEffect,
)

MAX_ID_LENGTH = 200
STATES = ("complete", "interrupted")


class IngestError(RejectedInput):
    """A snapshot, tool effect or import file we refuse."""


@dataclass(frozen=True)
class SnapshotPayload:
    conversation_id: str
    run_id: str
    agent: str
    state: str
    messages: list[ModelMessage]
    parent_run_id: str = ""
    step: int | None = None
    idempotency_key: str = ""
    client_supplied: bool = False
    started_at: datetime | None = None


@dataclass(frozen=True)
class ToolEffectPayload:
    run_id: str
    tool_call_id: str
    tool_name: str
    status: str
    started_at: datetime | None = None
    ended_at: datetime | None = None


@dataclass
class IngestResult:
    created: list[int] = field(default_factory=list)
    repeated: list[int] = field(default_factory=list)
    runs: set[str] = field(default_factory=set)
    conversations: set[str] = field(default_factory=set)
    new_messages: int = 0
    tool_effects: int = 0


def _format_loc(loc: Sequence[str | int]) -> str:
    path = "messages"
    for item in loc:
        path += f"[{item}]" if isinstance(item, int) else f".{item}"
    return path


def _identifier(data: dict, name: str, *, required: bool) -> str:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise IngestError(f"'{name}' is required.")
        return ""
    if not isinstance(value, str):
        raise IngestError(f"'{name}' must be a string, got {type(value).__name__}.")
    if len(value) > MAX_ID_LENGTH:
        raise IngestError(f"'{name}' is longer than {MAX_ID_LENGTH} characters.")
    return value


def parse_snapshot(data: object) -> SnapshotPayload:
    """A validated snapshot payload, or an IngestError naming the first problem."""
    if not isinstance(data, dict):
        raise IngestError(f"A snapshot must be a JSON object, got {type(data).__name__}.")
    state = data.get("state", "complete")
    if state not in STATES:
        raise IngestError(f"'state' must be 'complete' or 'interrupted', got {state!r}.")
    step = data.get("step")
    if step is not None and (not isinstance(step, int) or isinstance(step, bool)):
        raise IngestError(f"'step' must be an integer, got {step!r}.")
    raw_messages = data.get("messages")
    if not isinstance(raw_messages, list):
        raise IngestError("'messages' must be a list of ModelMessagesTypeAdapter messages.")
    try:
        messages = validate_messages(raw_messages)
    except ValidationError as error:
        first = error.errors()[0]
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise IngestError(f"Invalid message at {_format_loc(first['loc'])}: {first['msg']}{more}.") from None
    started_at = data.get("started_at")
    if started_at is not None:
        parsed = parse_datetime(started_at) if isinstance(started_at, str) else None
        if parsed is None or parsed.tzinfo is None:
            raise IngestError(f"'started_at' must be an ISO 8601 date-time with a time zone, got {started_at!r}.")
        started_at = parsed
    source = data.get("source", "server")
    if source not in Source.values:
        raise IngestError(f"'source' must be 'server' or 'client', got {source!r}.")
    return SnapshotPayload(
        conversation_id=_identifier(data, "conversation_id", required=True),
        run_id=_identifier(data, "run_id", required=True),
        agent=_identifier(data, "agent", required=False),
        parent_run_id=_identifier(data, "parent_run_id", required=False),
        idempotency_key=_identifier(data, "idempotency_key", required=False),
        state=state,
        step=step,
        messages=messages,
        client_supplied=source == Source.CLIENT,
        started_at=started_at,
    )


def _is_final(messages: Sequence[ModelMessage]) -> bool:
    """A history that ends in a model response without tool calls is a finished run."""
    if not messages or not isinstance(messages[-1], ModelResponse):
        return False
    return not any(isinstance(part, ToolCallPart) for part in messages[-1].parts)


def run_start(messages: Sequence[ModelMessage]) -> datetime | None:
    """When the run that wrote this history started: its own first message, not an inherited one.

    pydantic-ai stamps each message with the agent run that produced it; the last message is this run's, so the
    earliest message carrying the same run id is where it began. Recovery orders runs by this time.
    """
    own = messages[-1].run_id if messages else None
    stamps = [m.timestamp for m in messages if m.timestamp is not None and (own is None or m.run_id == own)]
    return min(stamps) if stamps else None


@dataclass(frozen=True)
class _Prepared:
    payload: SnapshotPayload
    dumped: list[str]
    shas: list[str]
    content_hashes: list[str]
    digest: str


def _prepare(payload: SnapshotPayload) -> _Prepared:
    dumped = [dump_message(m) for m in payload.messages]
    shas = [hashlib.sha256(d.encode()).hexdigest() for d in dumped]
    return _Prepared(
        payload=payload,
        dumped=dumped,
        shas=shas,
        content_hashes=[message_hash(m) for m in payload.messages],
        digest=hashlib.sha256("\n".join(shas).encode()).hexdigest(),
    )


def _store_messages(tenant: Tenant, prepared: Sequence[_Prepared]) -> tuple[dict[str, int], int]:
    """Ids of the StoredMessage rows for every message, inserting only those this tenant never stored."""
    wanted: dict[str, tuple[str, str]] = {}
    for item in prepared:
        for sha, content_hash, dumped in zip(item.shas, item.content_hashes, item.dumped, strict=True):
            wanted.setdefault(sha, (content_hash, dumped))
    ids: dict[str, int] = {}
    shas = list(wanted)
    for start in range(0, len(shas), 500):
        chunk = shas[start : start + 500]
        ids.update(StoredMessage.objects.filter(tenant=tenant, sha256__in=chunk).values_list("sha256", "id"))
    missing = [sha for sha in shas if sha not in ids]
    StoredMessage.objects.bulk_create(
        [StoredMessage(tenant=tenant, sha256=sha, content_hash=wanted[sha][0], data=wanted[sha][1]) for sha in missing],
        batch_size=500,
    )
    for start in range(0, len(missing), 500):
        chunk = missing[start : start + 500]
        ids.update(StoredMessage.objects.filter(tenant=tenant, sha256__in=chunk).values_list("sha256", "id"))
    return ids, len(missing)


def _runs_for(tenant: Tenant, prepared: Sequence[_Prepared], source: str) -> dict[str, Run]:
    """Every run the batch names, existing (locked) or created; 409 for a run id of another conversation."""
    wanted: dict[str, SnapshotPayload] = {}
    for item in prepared:
        wanted.setdefault(item.payload.run_id, item.payload)
    runs: dict[str, Run] = {}
    for start in range(0, len(wanted), 500):
        chunk = list(wanted)[start : start + 500]
        for run in (
            Run.objects.select_for_update(of=("self",))
            .select_related("conversation")
            .filter(tenant=tenant, run_id__in=chunk)
        ):
            runs[run.run_id] = run
    for item in prepared:
        run = runs.get(item.payload.run_id)
        if run is not None and run.conversation.external_id != item.payload.conversation_id:
            raise IngestError(
                f"Run '{item.payload.run_id}' already belongs to conversation '{run.conversation.external_id}', "
                f"not '{item.payload.conversation_id}'.",
                status=409,
            )
    new_runs = [payload for run_id, payload in wanted.items() if run_id not in runs]
    conversations = {}
    for payload in new_runs:
        if payload.conversation_id not in conversations:
            conversations[payload.conversation_id], _ = Conversation.objects.get_or_create(
                tenant=tenant, external_id=payload.conversation_id
            )
    created = Run.objects.bulk_create(
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
            for payload in new_runs
        ],
        batch_size=500,
    )
    runs.update({run.run_id: run for run in created})
    return runs


def _known_snapshots(tenant: Tenant, runs: Iterable[Run]) -> dict[tuple, int]:
    """Identities of the runs' stored snapshots: ("key", run, idempotency key) and ("content", run, step, state,
    digest), each to the snapshot id, so a repeat is found without a query per snapshot."""
    known: dict[tuple, int] = {}
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


def _identities(run: Run, item: _Prepared) -> list[tuple]:
    identities = [("content", run.id, item.payload.step, item.payload.state, item.digest)]
    if item.payload.idempotency_key:
        identities.insert(0, ("key", run.id, item.payload.idempotency_key))
    return identities


def _apply_tool_effects(tenant: Tenant, effects: Iterable[ToolEffectPayload], runs: dict[str, Run]) -> int:
    count = 0
    for effect in effects:
        run = runs.get(effect.run_id) or Run.objects.filter(tenant=tenant, run_id=effect.run_id).first()
        if run is None:
            raise IngestError(f"Tool effect for unknown run '{effect.run_id}'.", status=404)
        runs[effect.run_id] = run
        ToolEffect.objects.update_or_create(
            tenant=tenant,
            run=run,
            tool_call_id=effect.tool_call_id,
            defaults={
                "tool_name": effect.tool_name,
                "status": effect.status,
                "started_at": effect.started_at,
                "ended_at": effect.ended_at,
            },
        )
        count += 1
    return count


def ingest_snapshots(
    tenant: Tenant,
    payloads: Sequence[SnapshotPayload],
    *,
    source: str,
    via: str,
    tool_effects: Sequence[ToolEffectPayload] = (),
) -> IngestResult:
    """Store snapshots (and tool-effect records) in one transaction, then re-recover and re-audit what changed.

    `source` is the authority of whoever handed the history over (a `client` key can never claim `server`);
    anything raises IngestError and leaves the database as it was.
    """
    from sessions_app.transcripts.store import refresh_conversations

    prepared = [_prepare(payload) for payload in payloads]
    result = IngestResult()
    with transaction.atomic():
        runs = _runs_for(tenant, prepared, source)
        known = _known_snapshots(tenant, runs.values())
        touched_runs: dict[int, Run] = {}
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
        message_ids, result.new_messages = _store_messages(tenant, fresh)
        next_seq = dict(
            Snapshot.objects.filter(tenant=tenant, run_id__in=[runs[i.payload.run_id].id for i in fresh])
            .values("run_id")
            .annotate(top=Max("seq"))
            .values_list("run_id", "top")
        )
        snapshots = []
        for item in fresh:
            run = runs[item.payload.run_id]
            snapshot_source = Source.CLIENT if item.payload.client_supplied else source
            next_seq[run.id] = next_seq.get(run.id, 0) + 1
            snapshots.append(
                Snapshot(
                    tenant=tenant,
                    run=run,
                    seq=next_seq[run.id],
                    step=item.payload.step,
                    state=item.payload.state,
                    source=snapshot_source,
                    via=via,
                    idempotency_key=item.payload.idempotency_key,
                    digest=item.digest,
                    message_count=len(item.shas),
                )
            )
            _note_snapshot_on_run(run, item.payload, snapshot_source)
            touched_runs[run.id] = run
        Snapshot.objects.bulk_create(snapshots, batch_size=500)
        SnapshotMessage.objects.bulk_create(
            [
                SnapshotMessage(snapshot=snapshot, position=i, message_id=message_ids[sha])
                for snapshot, item in zip(snapshots, fresh, strict=True)
                for i, sha in enumerate(item.shas)
            ],
            batch_size=2000,
        )
        result.created = [snapshot.id for snapshot in snapshots]
        result.tool_effects = _apply_tool_effects(tenant, tool_effects, runs)
        if tool_effects:
            touched_runs.update({run.id: run for run in runs.values()})
        Run.objects.bulk_update(
            list(touched_runs.values()), ["source", "agent_name", "state", "finished_at"], batch_size=500
        )
        known = {
            message_ids[sha]: message
            for item in fresh
            for sha, message in zip(item.shas, item.payload.messages, strict=True)
        }
        refresh_conversations({run.conversation for run in touched_runs.values()}, list(touched_runs.values()), known)
    return result


def _note_snapshot_on_run(run: Run, payload: SnapshotPayload, source: str) -> None:
    """The latest snapshot decides the run's state; one client-supplied snapshot taints the whole run."""
    if source == Source.CLIENT:
        run.source = Source.CLIENT
    if payload.agent and not run.agent_name:
        run.agent_name = payload.agent
    run.finished_at = None
    if payload.state == "interrupted":
        run.state = RunState.INTERRUPTED
    elif _is_final(payload.messages):
        run.state = RunState.COMPLETE
        run.finished_at = max((m.timestamp for m in payload.messages if m.timestamp), default=timezone.now())
    else:
        run.state = RunState.RUNNING
