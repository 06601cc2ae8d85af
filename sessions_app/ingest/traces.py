"""OTLP trace exports in: decoded by `ingest.otlp_wire` and mapped to runs by `ingest.otlp` (both pure), validated by
`ingest.payloads.parse_snapshot` and stored by `ingest.service.ingest_snapshots`, exactly as POST /api/v1/snapshots
stores a snapshot.

The one thing read here first: copies of messages a run inherited, from its conversation's stored transcript, so
a run threaded through `message_history` repeats the stored messages (with their times, usage and ids) instead of
the bare content its trace carries.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from model_messages.serialization import load_message
from sessions_app.ingest.otlp import DecodedExport, KnownMessages, snapshot_data, validate
from sessions_app.ingest.payloads import (
    IngestError,
    RuntimeSpanPayload,
    SnapshotPayload,
    ToolEffectPayload,
    parse_snapshot,
)
from sessions_app.ingest.service import IngestResult, ingest_snapshots
from sessions_app.models import ApiKey, Tenant, TranscriptEntry
from sessions_app.tenancy.scoping import scoped


@dataclass
class TraceIngest:
    result: IngestResult
    rejected_spans: int
    message: str


def _stored_transcripts(tenant: Tenant, conversation_ids: Iterable[str]) -> dict[str, KnownMessages]:
    known = {conversation_id: KnownMessages() for conversation_id in conversation_ids}
    rows = (
        scoped(TranscriptEntry, tenant)
        .filter(conversation__external_id__in=list(known), summary_artifact=False, message__tenant=tenant)
        .order_by("conversation_id", "position")
        .values_list("conversation__external_id", "message__data")
        .iterator(chunk_size=2000)
    )
    for conversation_id, data in rows:
        known[conversation_id].extend([load_message(data)])
    return known


def ingest_traces(tenant: Tenant, decoded: DecodedExport, *, source: str, api_key: ApiKey | None) -> TraceIngest:
    """Store every run of the export in one ingest (one transaction); a run that fails validation is counted
    with the rejected spans, naming the problem, and the others are stored."""
    inheriting = {run.conversation_id for run in decoded.runs if run.new_message_index > 0}
    known = _stored_transcripts(tenant, inheriting)
    payloads: list[SnapshotPayload] = []
    effects: list[ToolEffectPayload] = []
    runtime: list[RuntimeSpanPayload] = []
    for run in decoded.runs:  # in start order: a later run of the export inherits from an earlier one
        try:
            messages = validate(run)
        except ValueError as error:
            decoded.reject(f"of agent runs whose messages are not valid ({error})", run.span_count)
            continue
        conversation = known.setdefault(run.conversation_id, KnownMessages())
        messages = conversation.inherit(messages, run.new_message_index)
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
