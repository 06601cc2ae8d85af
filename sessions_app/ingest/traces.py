"""OTLP trace exports in: decoded by `ingest.otlp_wire` and mapped to runs by `ingest.otlp` (both pure), validated by
`ingest.payloads` (`otlp.snapshot_of_run`) and stored by `ingest.service.ingest_snapshots`, exactly as
POST /api/v1/snapshots stores a snapshot.

The one thing read here first: copies of messages a run inherited, from its conversation's stored transcript, so
a run threaded through `message_history` repeats the stored messages (with their times, usage and ids) instead of
the bare content its trace carries. And the spans kept from earlier exports of the traces whose run spans this
export carries (`PendingSpan`): SimpleSpanProcessor sends a run's model-request and tool spans before its run span,
to whichever worker takes the request, so they wait in the database, not in a process. A pending span is deleted
when a run uses it, in the transaction that stores the run; one whose run span has not come within
`PENDING_SPAN_AGE` is deleted by the next export of its tenant that keeps spans (a run span longer in coming means
a run that lasted longer than that: its messages are still stored exactly, only its steps' usage and times are
lost, as before pending spans were kept).
"""

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import reduce
from operator import or_

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sessions_app.ingest.message_memo import MEMO
from sessions_app.ingest.otlp import (
    PYDANTIC_AI_SCOPE,
    RUN_OPERATION,
    DecodedExport,
    KnownMessages,
    decode_spans,
    snapshot_of_run,
    span_json,
    span_of,
    validate,
)
from sessions_app.ingest.otlp_wire import SpanFacts, spans_of
from sessions_app.ingest.payloads import (
    IngestError,
    RuntimeSpanPayload,
    SnapshotPayload,
    ToolEffectPayload,
)
from sessions_app.ingest.service import IngestResult, ingest_snapshots, one_writer
from sessions_app.models import ApiKey, Conversation, PendingSpan, Tenant, TranscriptEntry
from sessions_app.tenancy.scoping import scoped

_CACHE_CONVERSATIONS = 256  # conversations whose stored copies a process keeps
PENDING_SPAN_AGE = timedelta(hours=24)  # how long a span waits for its run span


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
    # StoredMessage id by id() of each copy whose stored bytes are its dump (the memo's object, so a payload
    # holds this very object and its sha256 is the row's): ingestion need not look these up by sha256.
    stored_ids: dict[int, int] = field(default_factory=dict)


_CACHE: OrderedDict[tuple[int, str], _StoredCopies] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _stored_copies(
    tenant: Tenant, conversation_id: str, conversation_pk: int, message_count: int
) -> tuple[KnownMessages, dict[int, int]]:
    """The conversation's stored transcript as known copies: kept in this process and brought up to date with the
    rows written since (rows have rising ids, and a rewritten row is a new one), so a threaded run reads only the
    rows added since this process last looked (found by the conversation's (conversation, id) index, not by
    scanning its history); read whole when a row before the end was rewritten or removed."""
    with _CACHE_LOCK:
        cached = _CACHE.pop((tenant.id, conversation_id), None)
    after = cached.last_entry_id if cached is not None else 0
    rows = list(
        scoped(TranscriptEntry, tenant)
        .filter(conversation_id=conversation_pk, id__gt=after, message__tenant=tenant)
        # By id, as the (conversation, id) index holds them: ordered by position, PostgreSQL would read them from the
        # position index and scan the history's rows for the new ones. Sorted by position here (a handful).
        .order_by("id")
        .values_list("id", "position", "summary_artifact", "message__data", "message_id")
    )
    rows.sort(key=lambda row: (row[1], not row[2], row[0]))  # by position, a summary artifact first, then by id
    if cached is not None:
        new = [row for row in rows if not row[2]]
        if any(row[1] < cached.length for row in new) or cached.length + len(new) != message_count:
            return _stored_copies(tenant, conversation_id, conversation_pk, message_count)  # not cached: read whole
    else:
        cached = _StoredCopies(KnownMessages(), 0, 0)
    for entry_id, _, artifact, data, message_id in rows:
        cached.last_entry_id = max(cached.last_entry_id, entry_id)
        if not artifact:
            message, known = MEMO.load(data)
            if known is not None:
                cached.stored_ids[id(message)] = message_id
            cached.known.extend([message])
            cached.length += 1
    with _CACHE_LOCK:
        _CACHE[(tenant.id, conversation_id)] = cached
        while len(_CACHE) > _CACHE_CONVERSATIONS:
            _CACHE.popitem(last=False)
    return cached.known.copy(), cached.stored_ids


def _stored_transcripts(
    tenant: Tenant, conversation_ids: Iterable[str]
) -> tuple[dict[str, KnownMessages], dict[int, int]]:
    """Each conversation's stored copies, and the StoredMessage ids of those copies (by id() of the copy)."""
    stored = scoped(Conversation, tenant).filter(external_id__in=list(conversation_ids))
    copies: dict[str, KnownMessages] = {}
    stored_ids: dict[int, int] = {}
    for conversation_id, pk, count in stored.values_list("external_id", "pk", "message_count"):
        copies[conversation_id], ids = _stored_copies(tenant, conversation_id, pk, count)
        stored_ids.update(ids)
    return copies, stored_ids


def ingest_export(
    tenant: Tenant, request: ExportTraceServiceRequest, *, source: str, api_key: ApiKey | None
) -> TraceIngest:
    """An export's runs with the spans kept for them from earlier exports (of this tenant only), stored; its spans
    still without their run span kept, in the same transaction."""
    spans = spans_of(request)
    traces = {s.trace_id for s in spans if s.scope == PYDANTIC_AI_SCOPE and s.operation == RUN_OPERATION}
    earlier = _pending_spans(tenant, traces)
    decoded = decode_spans(spans, earlier)
    return ingest_traces(tenant, decoded, source=source, api_key=api_key)


def _pending_spans(tenant: Tenant, traces: set[str]) -> list[SpanFacts]:
    if not traces:
        return []
    rows = scoped(PendingSpan, tenant).filter(trace_id__in=sorted(traces)).order_by("id").values_list("span", flat=True)
    return [span_of(data) for data in rows]


def _keep_pending(tenant: Tenant, decoded: DecodedExport) -> None:
    """Delete the pending spans a run of this export used, keep its spans still without their run (a re-sent
    one is kept once), and delete, when keeping any, the tenant's pending spans older than `PENDING_SPAN_AGE`."""
    if decoded.attached:
        used = reduce(or_, (Q(trace_id=trace, span_id=span) for trace, span in sorted(decoded.attached)))
        scoped(PendingSpan, tenant).filter(used).delete()
    if decoded.orphans:
        now = timezone.now()
        scoped(PendingSpan, tenant).filter(received_at__lt=now - PENDING_SPAN_AGE).delete()
        PendingSpan.objects.bulk_create(
            [
                PendingSpan(tenant=tenant, trace_id=s.trace_id, span_id=s.span_id, received_at=now, span=span_json(s))
                for s in decoded.orphans
            ],
            ignore_conflicts=True,
            batch_size=500,
        )


def ingest_traces(tenant: Tenant, decoded: DecodedExport, *, source: str, api_key: ApiKey | None) -> TraceIngest:
    """Store every run of the export in one ingest (one transaction, which also keeps and drops its pending
    spans); a run that fails validation is counted with the rejected spans, naming the problem, and the others
    are stored."""
    inheriting = {run.conversation_id for run in decoded.runs if run.new_message_index > 0}
    known, stored_ids = _stored_transcripts(tenant, inheriting)
    payloads: list[SnapshotPayload] = []
    effects: list[ToolEffectPayload] = []
    runtime: list[RuntimeSpanPayload] = []
    for run in decoded.runs:  # in start order: a later run of the export inherits from an earlier one
        conversation = known.setdefault(run.conversation_id, KnownMessages())
        # Inherited messages recognised on the plain data are not validated; only the rest is.
        copies, after = conversation.inherit_traced(run.inherited_texts)
        try:
            messages = copies + validate(run, start=len(copies))
        except ValueError as error:
            decoded.reject(f"of agent runs whose messages are not valid ({error})", run.span_count)
            continue
        messages = conversation.inherit(messages, run.new_message_index, start=len(copies), after=after)
        try:
            payload = snapshot_of_run(run, messages)
        except IngestError as error:
            decoded.reject(f"of agent runs refused as snapshots ({error.message})", run.span_count)
            continue
        conversation.extend(payload.messages[run.new_message_index :])
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
            also=lambda: _keep_pending(tenant, decoded),
            known_ids=stored_ids,
        )
    elif decoded.orphans or decoded.attached:
        with one_writer(), transaction.atomic():
            _keep_pending(tenant, decoded)
    return TraceIngest(result, decoded.rejected_spans, decoded.message())


def forget_stored_copies() -> None:
    """Drop every conversation's kept copies (the next run reads its transcript whole)."""
    with _CACHE_LOCK:
        _CACHE.clear()
