"""Shaping audit records for the operator pages: repairs across a tenant, the event log, one run's audit.

Verdicts, findings, repairs and events come from sessions_app.audit.service; this module adds only what
pages need on top (links to runs, keyset cursors, CSV).
"""

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max

from sessions_app.audit import gates, service
from sessions_app.audit.digests import hash_tool_call_id
from sessions_app.audit.service import AuditReport, RepairRow
from sessions_app.models import Run, Snapshot, Tenant, TranscriptEntry
from sessions_app.models.audit import AuditEvent, Receipt, Wait
from sessions_app.tenancy.scoping import scoped

PAGE_SIZE = 50


class BadCursor(ValueError):
    pass


@dataclass(frozen=True)
class RepairLink:
    repair: RepairRow
    run_pk: int | None
    conversation_pk: int | None
    position: int | None = None  # the transcript message holding the call (or the orphan result)
    snapshot_seq: int | None = None  # the run's latest snapshot: the history the audit judged


def _positions_by_call_hash(tenant: Tenant, run_pks: set[int]) -> dict[tuple[int, str], int]:
    """(run pk, hashed tool-call id) → the first transcript position whose message has a part with that id,
    from the rows' stored facts (no message body is read)."""
    found: dict[tuple[int, str], int] = {}
    rows = (
        scoped(TranscriptEntry, tenant)
        .filter(run_id__in=run_pks, summary_artifact=False)
        .order_by("position")
        .values_list("run_id", "position", "facts")
    )
    for run_pk, position, facts in rows:
        for part in (facts or {}).get("parts") or ():
            call_id = part.get("tool_call_id")
            if call_id:
                found.setdefault((run_pk, hash_tool_call_id(str(call_id))), position)
    return found


def repair_rows(tenant: Tenant, limit: int = 200) -> list[RepairLink]:
    """The audit's repair list, each row with what its links need: run, conversation, the message in the
    transcript that holds the call (or orphan result) and the run's latest snapshot (three queries for all rows)."""
    rows = service.list_repairs(tenant, limit=limit)
    pks = {
        run_id: (pk, conversation_pk)
        for run_id, pk, conversation_pk in scoped(Run, tenant)
        .filter(run_id__in={row.run_id for row in rows})
        .values_list("run_id", "pk", "conversation_id")
    }
    run_pks = {pk for pk, _ in pks.values()}
    positions = _positions_by_call_hash(tenant, run_pks) if run_pks else {}
    latest = dict(
        scoped(Snapshot, tenant)
        .filter(run_id__in=run_pks)
        .values("run_id")
        .annotate(seq=Max("seq"))
        .values_list("run_id", "seq")
    )
    links = []
    for row in rows:
        run_pk, conversation_pk = pks.get(row.run_id, (None, None))
        position = positions.get((run_pk, row.tool_call_hash)) if run_pk is not None else None
        links.append(
            RepairLink(row, run_pk, conversation_pk, position, latest.get(run_pk) if run_pk is not None else None)
        )
    return links


@dataclass(frozen=True)
class EventFilters:
    event_class: str = ""
    run_id: str = ""
    since: datetime | None = None
    until: datetime | None = None


def _before_id(cursor: str | None) -> int | None:
    if not cursor:
        return None
    if not cursor.isdigit():
        raise BadCursor("That page link is not valid; start again from the first page.")
    return int(cursor)


def event_page(tenant: Tenant, filters: EventFilters, cursor: str | None) -> tuple[list[AuditEvent], str | None]:
    """One page of events, newest first; the cursor is the last row's id (the audit's `before_id`)."""
    events = service.list_audit_events(
        tenant,
        event_classes=[filters.event_class] if filters.event_class else [],
        run_id=filters.run_id,
        since=filters.since,
        until=filters.until,
        before_id=_before_id(cursor),
        limit=PAGE_SIZE + 1,
    )
    if len(events) > PAGE_SIZE:
        events = events[:PAGE_SIZE]
        return events, str(events[-1].pk)
    return events, None


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

    @property
    def open_waits(self) -> list[Wait]:
        return [wait for wait in self.waits if wait.resolved_at is None]


def run_audit(tenant: Tenant, run: Run) -> RunAudit:
    from sessions_app.audit import gates
    from sessions_app.models import Conversation, Snapshot

    owner = (
        scoped(Conversation, tenant).filter(pk=run.conversation_id).values_list("owner_principal_hash", flat=True)
    ).first()
    principals = scoped(Snapshot, tenant).filter(run=run).exclude(principal_hash="")
    return RunAudit(
        run=run,
        report=service.audit_report(run),
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
