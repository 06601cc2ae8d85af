"""OTLP trace exports in: decoded by `ingest.otlp_wire` and mapped to runs by `ingest.otlp` (both pure), validated by
`ingest.payloads.parse_snapshot` and stored by `ingest.service.ingest_snapshots`, exactly as POST /api/v1/snapshots
stores a snapshot.

The one thing read here first: copies of messages a run inherited, from its conversation's stored transcript, so
a run threaded through `message_history` repeats the stored messages (with their times, usage and ids) instead of
the bare content its trace carries.
"""

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from model_messages.serialization import load_message
from sessions_app.ingest.message_memo import MEMO
from sessions_app.ingest.otlp import DecodedExport, KnownMessages, snapshot_data, validate
from sessions_app.ingest.payloads import (
    IngestError,
    RuntimeSpanPayload,
    SnapshotPayload,
    ToolEffectPayload,
    parse_snapshot,
)
from sessions_app.ingest.service import IngestResult, ingest_snapshots
from sessions_app.models import ApiKey, Conversation, Tenant, TranscriptEntry
from sessions_app.tenancy.scoping import scoped

_CACHE_CONVERSATIONS = 256  # conversations whose stored copies a process keeps


@dataclass
class TraceIngest:
    result: IngestResult
    rejected_spans: int
    message: str


@dataclass
class _StoredCopies:
    """A conversation's stored transcript as known copies, and the newest transcript row it has read."""

    known: KnownMessages
    last_entry_id: int
    length: int


_CACHE: OrderedDict[tuple[int, str], _StoredCopies] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _stored_copies(tenant: Tenant, conversation_id: str, message_count: int) -> KnownMessages:
    """The conversation's stored transcript as known copies: kept in this process and brought up to date with the
    rows written since (rows have rising ids, and a rewritten row is a new one), so a threaded run reads only the
    rows added since this process last looked; read whole when a row before the end was rewritten or removed."""
    with _CACHE_LOCK:
        cached = _CACHE.pop((tenant.id, conversation_id), None)
    after = cached.last_entry_id if cached is not None else 0
    rows = list(
        scoped(TranscriptEntry, tenant)
        .filter(conversation__external_id=conversation_id, id__gt=after, message__tenant=tenant)
        .order_by("position", "-summary_artifact", "id")
        .values_list("id", "position", "summary_artifact", "message__data")
    )
    if cached is not None:
        new = [row for row in rows if not row[2]]
        if any(position < cached.length for _, position, _, _ in new) or cached.length + len(new) != message_count:
            return _stored_copies(tenant, conversation_id, message_count)  # not cached now: read whole
    else:
        cached = _StoredCopies(KnownMessages(), 0, 0)
    for entry_id, _, artifact, data in rows:
        cached.last_entry_id = max(cached.last_entry_id, entry_id)
        if not artifact:
            message = load_message(data)
            known = MEMO.keep(message, loaded_from=data)
            cached.known.extend([known.message if known is not None else message])
            cached.length += 1
    with _CACHE_LOCK:
        _CACHE[(tenant.id, conversation_id)] = cached
        while len(_CACHE) > _CACHE_CONVERSATIONS:
            _CACHE.popitem(last=False)
    return cached.known.copy()


def _stored_transcripts(tenant: Tenant, conversation_ids: Iterable[str]) -> dict[str, KnownMessages]:
    counts = dict(
        scoped(Conversation, tenant)
        .filter(external_id__in=list(conversation_ids))
        .values_list("external_id", "message_count")
    )
    return {
        conversation_id: _stored_copies(tenant, conversation_id, count) for conversation_id, count in counts.items()
    }


def ingest_traces(tenant: Tenant, decoded: DecodedExport, *, source: str, api_key: ApiKey | None) -> TraceIngest:
    """Store every run of the export in one ingest (one transaction); a run that fails validation is counted
    with the rejected spans, naming the problem, and the others are stored."""
    inheriting = {run.conversation_id for run in decoded.runs if run.new_message_index > 0}
    known = _stored_transcripts(tenant, inheriting)
    payloads: list[SnapshotPayload] = []
    effects: list[ToolEffectPayload] = []
    runtime: list[RuntimeSpanPayload] = []
    for run in decoded.runs:  # in start order: a later run of the export inherits from an earlier one
        conversation = known.setdefault(run.conversation_id, KnownMessages())
        # Inherited messages recognised on the plain data are not validated; only the rest is.
        copies, after = conversation.inherit_traced(run.messages, run.new_message_index)
        try:
            messages = copies + validate(run, start=len(copies))
        except ValueError as error:
            decoded.reject(f"of agent runs whose messages are not valid ({error})", run.span_count)
            continue
        messages = conversation.inherit(messages, run.new_message_index, start=len(copies), after=after)
        try:
            payload = parse_snapshot(snapshot_data(run, messages))
        except IngestError as error:
            decoded.reject(f"of agent runs refused as snapshots ({error.message})", run.span_count)
            continue
        conversation.extend(messages[run.new_message_index :])
        payloads.append(payload)
        effects.extend(run.tool_effects)
        runtime.extend(run.runtime_spans)
    result = IngestResult()
    if payloads or effects:
        result = ingest_snapshots(
            tenant,
            payloads,
            source=source,
            via="otlp",
            tool_effects=effects,
            runtime_spans=runtime,
            api_key=api_key,
        )
    return TraceIngest(result, decoded.rejected_spans, decoded.message())


def forget_stored_copies() -> None:
    """Drop every conversation's kept copies (the next run reads its transcript whole)."""
    with _CACHE_LOCK:
        _CACHE.clear()
