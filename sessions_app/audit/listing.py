"""Shaping audit records for the operator pages: repairs across a tenant, the event log, one run's audit.

Verdicts, findings, repairs and events come from sessions_app.audit.service; this module adds only what
pages need on top (links to runs, keyset cursors, CSV).
"""

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Max

from sessions_app.audit import gates, service
from sessions_app.audit.repair_places import RepairPlace, repair_places
from sessions_app.audit.service import AuditReport, RepairRow
from sessions_app.core import paging
from sessions_app.models import Conversation, Run, Snapshot, Tenant
from sessions_app.models.audit import AuditEvent, Receipt, Wait
from sessions_app.tenancy.scoping import scoped

PAGE_SIZE = 50


@dataclass(frozen=True)
class RepairLink:
    repair: RepairRow
    run_pk: int | None
    conversation_pk: int | None
    place: RepairPlace | None = None  # the message holding the call (or orphan result), or its in-place mark


def repair_rows(tenant: Tenant, limit: int = 200) -> list[RepairLink]:
    """The audit's repair list, each row with what its links need: run, conversation, the place in the
    transcript of the call (or orphan result) and the run's latest snapshot (a few queries for all rows)."""
    rows = service.list_repairs(tenant, limit=limit)
    pks = {
        run_id: (pk, conversation_pk)
        for run_id, pk, conversation_pk in scoped(Run, tenant)
        .filter(run_id__in={row.run_id for row in rows})
        .values_list("run_id", "pk", "conversation_id")
    }
    places = repair_places(tenant, [(pks[row.run_id][0], row.tool_call_hash) for row in rows if row.run_id in pks])
    links = []
    for row in rows:
        run_pk, conversation_pk = pks.get(row.run_id, (None, None))
        place = places.get((run_pk, row.tool_call_hash)) if run_pk is not None else None
        links.append(RepairLink(row, run_pk, conversation_pk, place))
    return links


@dataclass(frozen=True)
class EventFilters:
    event_class: str = ""
    run_id: str = ""
    since: datetime | None = None
    until: datetime | None = None


def event_page(tenant: Tenant, filters: EventFilters, cursor: str | None) -> tuple[list[AuditEvent], str | None]:
    """One page of events, newest first; the cursor is the last row's id (the audit's `before_id`)."""
    events = service.list_audit_events(
        tenant,
        event_classes=[filters.event_class] if filters.event_class else [],
        run_id=filters.run_id,
        since=filters.since,
        until=filters.until,
        before_id=paging.decode_id(cursor),
        limit=PAGE_SIZE + 1,
    )
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
    runs = {
        run_id: (pk, conversation_id)
        for run_id, pk, conversation_id in scoped(Run, tenant)
        .filter(run_id__in={event.run_id for event in with_calls})
        .values_list("run_id", "pk", "conversation__external_id")
    }
    places = repair_places(tenant, [(runs[e.run_id][0], e.tool_call_hash) for e in with_calls if e.run_id in runs])
    return {
        event.pk: EventPlace(runs[event.run_id][1], event.run_id, places[(runs[event.run_id][0], event.tool_call_hash)])
        for event in with_calls
        if event.run_id in runs
    }


CSV_COLUMNS = (
    "observed_at",
    "event_class",
    "conversation_id",
    "run_id",
    "tool_call_hash",
    "actor",
    "verdict",
    "principal_hash",
)


def events_csv(tenant: Tenant, filters: EventFilters) -> Iterator[str]:
    """Every matching event as CSV, streamed 500 rows at a time (cells that start like a formula are quoted)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    yield buffer.getvalue()
    before_id = None
    while True:
        events = service.list_audit_events(
            tenant,
            event_classes=[filters.event_class] if filters.event_class else [],
            run_id=filters.run_id,
            since=filters.since,
            until=filters.until,
            before_id=before_id,
            limit=500,
        )
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
    return list(gates.EVENT_CLASSES)


REPLAY_EVENTS_SHOWN = 20


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

    @property
    def findings(self) -> list[tuple[dict[str, str], RepairPlace | None]]:
        """Each finding with the place of its tool call, or (a finding about the whole history) the snapshot judged."""
        judged = RepairPlace(None, "", False, self.latest_snapshot_seq)
        return [(f, self.places.get(f.get("tool_call_hash", ""), judged)) for f in self.report.findings]

    @property
    def open_waits(self) -> list[Wait]:
        return [wait for wait in self.waits if wait.resolved_at is None]


def run_audit(tenant: Tenant, run: Run) -> RunAudit:
    owner = (
        scoped(Conversation, tenant).filter(pk=run.conversation_id).values_list("owner_principal_hash", flat=True)
    ).first()
    principals = scoped(Snapshot, tenant).filter(run=run).exclude(principal_hash="")
    report = service.audit_report(run)
    hashes = {f["tool_call_hash"] for f in report.findings if f.get("tool_call_hash")}
    places = repair_places(tenant, [(run.pk, h) for h in hashes])
    return RunAudit(
        run=run,
        report=report,
        places={h: places[(run.pk, h)] for h in hashes},
        latest_snapshot_seq=scoped(Snapshot, tenant).filter(run=run).aggregate(seq=Max("seq"))["seq"],
        receipts=list(scoped(Receipt, tenant).filter(run=run).order_by("-created_at", "-pk")),
        waits=list(scoped(Wait, tenant).filter(run=run).order_by("-created_at", "-pk")),
        owner_principal=owner or "",
        run_principals=tuple(sorted(set(principals.values_list("principal_hash", flat=True)))),
        replay_events=tuple(
            service.list_audit_events(
                tenant,
                event_classes=[gates.REPLAY_ALLOWED, gates.REPLAY_REFUSED],
                conversation_id=run.conversation.external_id,
                limit=REPLAY_EVENTS_SHOWN,
            )
        ),
    )
