"""Shaping audit records for the operator pages: repairs across a tenant, the event log, one run's audit.

Verdicts and findings come from sessions_app.audit.service and events from sessions_app.audit.events; this
module reads the repairs out of the stored findings and adds what pages need (links to runs, cursors, CSV).
"""

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Max

from sessions_app.audit import service
from sessions_app.audit.events import list_audit_events
from sessions_app.audit.gates import TOOL_PAIRING
from sessions_app.audit.ledger import OUTCOME_UNKNOWN, effect_outcome
from sessions_app.audit.repair_places import RepairPlace, repair_places
from sessions_app.audit.service import AuditReport
from sessions_app.audit.vocabulary import EventClass
from sessions_app.core import paging
from sessions_app.models import Conversation, Run, Snapshot, Tenant, ToolEffect
from sessions_app.models.audit import AuditEvent, Receipt, RunVerdict, Wait
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.runtime_spans import Approval, approvals_of

PAGE_SIZE = 50


@dataclass(frozen=True)
class RepairRow:
    """One tool-pairing repair of a run, as the dashboard lists them."""

    run_id: str
    conversation_id: str
    verdict: str
    code: str
    tool_name: str
    tool_call_hash: str
    detail: str
    guidance: str
    updated_at: datetime


def list_repairs(tenant: Tenant, *, limit: int = 200) -> list[RepairRow]:
    """Every current tool-pairing repair (interrupted calls, removed orphan results) across the tenant."""
    rows: list[RepairRow] = []
    verdicts = (
        scoped(RunVerdict, tenant)
        .filter(repair_count__gt=0)
        .select_related("run__conversation")
        .order_by("-updated_at", "-id")
    )
    for stored in verdicts:
        for finding in stored.findings:
            if finding.get("gate") != TOOL_PAIRING:
                continue
            rows.append(
                RepairRow(
                    run_id=stored.run.run_id,
                    conversation_id=stored.run.conversation.external_id,
                    verdict=stored.verdict,
                    code=finding["code"],
                    tool_name=finding.get("tool_name", ""),
                    tool_call_hash=finding.get("tool_call_hash", ""),
                    detail=finding["detail"],
                    guidance=finding["guidance"],
                    updated_at=stored.updated_at,
                )
            )
            if len(rows) >= limit:
                return rows
    return rows


@dataclass(frozen=True)
class RepairLink:
    repair: RepairRow
    run_pk: int | None
    conversation_pk: int | None
    place: RepairPlace | None = None  # the message holding the call (or orphan result), or its in-place mark


def _runs_by_id(tenant: Tenant, run_ids: set[str], conversation_field: str) -> dict[str, tuple[int, Any]]:
    """Run id → (run pk, the run's `conversation_field`) for those of `run_ids` that are runs of this tenant."""
    runs = scoped(Run, tenant).filter(run_id__in=run_ids)
    if conversation_field.startswith("conversation__"):  # a join: named on both tables, so one shard on Citus
        runs = runs.filter(conversation__tenant=tenant)
    rows = runs.values_list("run_id", "pk", conversation_field)
    return {run_id: (pk, conversation) for run_id, pk, conversation in rows}


def repair_rows(tenant: Tenant, limit: int = 200) -> list[RepairLink]:
    """The audit's repair list, each row with what its links need: run, conversation, the place in the
    transcript of the call (or orphan result) and the run's latest snapshot (a few queries for all rows)."""
    rows = list_repairs(tenant, limit=limit)
    pks: dict[str, tuple[int, int]] = _runs_by_id(tenant, {row.run_id for row in rows}, "conversation_id")
    places = repair_places(tenant, [(pks[row.run_id][0], row.tool_call_hash) for row in rows if row.run_id in pks])
    links = []
    for row in rows:
        run_pk, conversation_pk = pks.get(row.run_id, (None, None))
        place = places.get((run_pk, row.tool_call_hash)) if run_pk is not None else None
        links.append(RepairLink(row, run_pk, conversation_pk, place))
    return links


@dataclass(frozen=True)
class EventFilters:
    """The event log page's filters: one class at most, a run, and a time range (`until` exclusive)."""

    event_class: str = ""
    run_id: str = ""
    since: datetime | None = None
    until: datetime | None = None

    def read(self, tenant: Tenant, *, before_id: int | None, limit: int) -> list[AuditEvent]:
        """The matching events, newest first, older than `before_id` when given."""
        return list_audit_events(
            tenant,
            event_classes=[self.event_class] if self.event_class else [],
            run_id=self.run_id,
            since=self.since,
            until=self.until,
            before_id=before_id,
            limit=limit,
        )


def event_page(tenant: Tenant, filters: EventFilters, cursor: str | None) -> tuple[list[AuditEvent], str | None]:
    """One page of events, newest first; the cursor is the last row's id (the audit's `before_id`).

    paging.BadCursor for a cursor that is not one."""
    events = filters.read(tenant, before_id=paging.decode_id(cursor), limit=PAGE_SIZE + 1)
    if len(events) > PAGE_SIZE:
        events = events[:PAGE_SIZE]
        return events, str(events[-1].pk)
    return events, None


@dataclass(frozen=True)
class EventPlace:
    conversation_id: str
    run_id: str
    place: RepairPlace


def event_places(tenant: Tenant, events: list[AuditEvent]) -> dict[int, EventPlace]:
    """Event pk → where the tool call it records sits (message, in-place mark, snapshot), for events naming one."""
    with_calls = [event for event in events if event.tool_call_hash and event.run_id]
    if not with_calls:
        return {}
    runs: dict[str, tuple[int, str]] = _runs_by_id(
        tenant, {event.run_id for event in with_calls}, "conversation__external_id"
    )
    places = repair_places(tenant, [(runs[e.run_id][0], e.tool_call_hash) for e in with_calls if e.run_id in runs])
    return {
        event.pk: EventPlace(runs[event.run_id][1], event.run_id, places[(runs[event.run_id][0], event.tool_call_hash)])
        for event in with_calls
        if event.run_id in runs
    }


# What an event says, in the API and the CSV alike (the CSV puts its time first).
EVENT_FIELDS = (
    "event_class",
    "conversation_id",
    "run_id",
    "tool_call_hash",
    "actor",
    "verdict",
    "principal_hash",
    "subject",
)
CSV_COLUMNS = ("observed_at", *EVENT_FIELDS)


def events_csv(tenant: Tenant, filters: EventFilters) -> Iterator[str]:
    """Every matching event as CSV, streamed 500 rows at a time (cells that start like a formula are quoted)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    yield buffer.getvalue()
    before_id = None
    while True:
        events = filters.read(tenant, before_id=before_id, limit=500)
        if not events:
            return
        buffer.seek(0)
        buffer.truncate()
        for event in events:
            writer.writerow([_csv_safe(getattr(event, column)) for column in CSV_COLUMNS])
        yield buffer.getvalue()
        before_id = events[-1].pk


def _csv_safe(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    text = "" if value is None else str(value)
    # A spreadsheet would run a cell starting with = + - @ as a formula (CSV injection).
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def event_classes() -> list[str]:
    return [event_class.value for event_class in EventClass]


REPLAY_EVENTS_SHOWN = 20


@dataclass(frozen=True)
class LedgerEntry:
    """One call of the run's tool-effect ledger, with what it says happened (`ledger.effect_outcome`)."""

    tool_call_id: str
    tool_name: str
    status: str
    outcome: str
    started_at: datetime | None
    ended_at: datetime | None

    @property
    def unknown(self) -> bool:
        return self.outcome == OUTCOME_UNKNOWN


def run_ledger(tenant: Tenant, run: Run) -> tuple[LedgerEntry, ...]:
    effects = scoped(ToolEffect, tenant).filter(run=run).order_by("started_at", "pk")
    return tuple(
        LedgerEntry(
            e.tool_call_id,
            e.tool_name,
            e.status,
            effect_outcome(e.status, e.ended_at is not None, run.state),
            e.started_at,
            e.ended_at,
        )
        for e in effects
    )


@dataclass
class RunAudit:
    run: Run
    report: AuditReport
    receipts: list[Receipt]
    waits: list[Wait]
    owner_principal: str = ""  # keyed hashes, shown truncated
    run_principals: tuple[str, ...] = ()
    replay_events: tuple[AuditEvent, ...] = ()
    places: dict[str, RepairPlace] = field(default_factory=dict)  # hashed tool-call id → its place
    latest_snapshot_seq: int | None = None  # the history the audit judged
    tool_effects: tuple[LedgerEntry, ...] = ()  # the run's tool-effect ledger, in start order
    approvals: tuple[Approval, ...] = ()  # the calls the run ended waiting on, and what became of them

    @property
    def findings(self) -> list[tuple[dict[str, str], RepairPlace | None]]:
        """Each finding with the place of its tool call, or (a finding about the whole history) the snapshot judged."""
        judged = RepairPlace(None, "", False, self.latest_snapshot_seq)
        return [(f, self.places.get(f.get("tool_call_hash", ""), judged)) for f in self.report.findings]

    @property
    def open_waits(self) -> list[Wait]:
        return [wait for wait in self.waits if wait.resolved_at is None]


def run_audit(tenant: Tenant, run: Run) -> RunAudit:
    # Fetched with the tenant named and kept on the run: the report and the page read the run's conversation.
    run.conversation = scoped(Conversation, tenant).get(pk=run.conversation_id)
    principals = scoped(Snapshot, tenant).filter(run=run).exclude(principal_hash="")
    report = service.audit_report(run)
    hashes = {f["tool_call_hash"] for f in report.findings if f.get("tool_call_hash")}
    places = repair_places(tenant, [(run.pk, h) for h in hashes])
    return RunAudit(
        run=run,
        report=report,
        places={h: places[(run.pk, h)] for h in hashes},
        latest_snapshot_seq=scoped(Snapshot, tenant).filter(run=run).aggregate(seq=Max("seq"))["seq"],
        tool_effects=run_ledger(tenant, run),
        approvals=tuple(approvals_of(run)),
        receipts=list(scoped(Receipt, tenant).filter(run=run).order_by("-created_at", "-pk")),
        waits=list(scoped(Wait, tenant).filter(run=run).order_by("-created_at", "-pk")),
        owner_principal=run.conversation.owner_principal_hash,
        run_principals=tuple(sorted(set(principals.values_list("principal_hash", flat=True)))),
        replay_events=tuple(
            list_audit_events(
                tenant,
                event_classes=[EventClass.REPLAY_ALLOWED, EventClass.REPLAY_REFUSED],
                conversation_id=run.conversation.external_id,
                limit=REPLAY_EVENTS_SHOWN,
            )
        ),
    )
