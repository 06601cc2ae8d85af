"""Reading audit records for the operator pages: repairs across a tenant, the audit event log, one run's audit.

Read-only; verdicts and events are written by sessions_app.audit.
"""

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from sessions_app.audit import gates
from sessions_app.audit.guidance import guidance_for
from sessions_app.conversation_list import BadCursor, Sort, decode_cursor, encode_cursor
from sessions_app.models import Run, Tenant
from sessions_app.models.audit import AuditEvent, Receipt, RunVerdict, Wait
from sessions_app.tenancy import scoped

PAGE_SIZE = 50
_EVENT_SORT = Sort("observed_at", True, "Newest first")


@dataclass(frozen=True)
class RepairRow:
    run: Run
    verdict: str
    code: str
    event_class: str
    tool_call_hash: str
    tool_name: str
    detail: str
    guidance: str


def repair_rows(tenant: Tenant, limit: int = 500) -> list[RepairRow]:
    """Every tool-pairing finding of the tenant's runs, newest verdicts first (at most `limit`)."""
    verdicts = (
        scoped(RunVerdict, tenant)
        .filter(repair_count__gt=0)
        .select_related("run", "run__conversation")
        .order_by("-updated_at", "-pk")
    )
    rows: list[RepairRow] = []
    for verdict in verdicts:
        for finding in verdict.findings or []:
            if finding.get("gate") != gates.TOOL_PAIRING:
                continue
            code = finding.get("code", "")
            rows.append(
                RepairRow(
                    run=verdict.run,
                    verdict=verdict.verdict,
                    code=code,
                    event_class=finding.get("class", ""),
                    tool_call_hash=finding.get("tool_call_hash", ""),
                    tool_name=finding.get("tool_name", ""),
                    detail=finding.get("detail", ""),
                    guidance=finding.get("guidance") or (guidance_for(code) if code else ""),
                )
            )
            if len(rows) >= limit:
                return rows
    return rows


@dataclass(frozen=True)
class EventFilters:
    event_class: str = ""
    run_id: str = ""
    since: datetime | None = None
    until: datetime | None = None


def filtered_events(tenant: Tenant, filters: EventFilters) -> QuerySet[AuditEvent]:
    qs = scoped(AuditEvent, tenant)
    if filters.event_class:
        qs = qs.filter(event_class=filters.event_class)
    if filters.run_id:
        qs = qs.filter(run_id=filters.run_id)
    if filters.since:
        qs = qs.filter(observed_at__gte=filters.since)
    if filters.until:
        qs = qs.filter(observed_at__lt=filters.until)
    return qs


def event_page(qs: QuerySet[AuditEvent], cursor: str | None) -> tuple[list[AuditEvent], str | None]:
    """Newest first, keyset-paginated on (observed_at, id); raises BadCursor for a forged cursor."""
    if cursor:
        value, pk = decode_cursor(cursor, _EVENT_SORT)
        qs = qs.filter(Q(observed_at__lt=value) | Q(observed_at=value, pk__lt=pk))
    rows = list(qs.order_by("-observed_at", "-pk")[: PAGE_SIZE + 1])
    if len(rows) > PAGE_SIZE:
        rows = rows[:PAGE_SIZE]
        return rows, encode_cursor(rows[-1].observed_at, rows[-1].pk)
    return rows, None


CSV_COLUMNS = ("observed_at", "event_class", "conversation_id", "run_id", "tool_call_hash", "actor")


def events_csv(qs: QuerySet[AuditEvent]) -> Iterator[str]:
    """The events as CSV, streamed in chunks (cells that start like a formula are quoted as text)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    yield buffer.getvalue()
    for row in qs.order_by("-observed_at", "-pk").values_list(*CSV_COLUMNS).iterator(chunk_size=2000):
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([_csv_safe(value) for value in row])
        yield buffer.getvalue()


def _csv_safe(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    text = "" if value is None else str(value)
    # A spreadsheet would run a cell starting with = + - @ as a formula (CSV injection).
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def event_classes(tenant: Tenant) -> list[str]:
    return sorted(set(scoped(AuditEvent, tenant).values_list("event_class", flat=True).distinct()))


@dataclass
class RunAudit:
    run: Run
    verdict: RunVerdict | None
    findings: list[dict]
    receipts: list[Receipt]
    waits: list[Wait]
    events: list[AuditEvent]


def run_audit(tenant: Tenant, run: Run) -> RunAudit:
    verdict = scoped(RunVerdict, tenant).filter(run=run).first()
    findings = []
    for finding in (verdict.findings if verdict else None) or []:
        code = finding.get("code", "")
        findings.append({**finding, "guidance": finding.get("guidance") or (guidance_for(code) if code else "")})
    return RunAudit(
        run=run,
        verdict=verdict,
        findings=findings,
        receipts=list(scoped(Receipt, tenant).filter(run=run).order_by("-created_at", "-pk")),
        waits=list(scoped(Wait, tenant).filter(run=run).order_by("-created_at", "-pk")),
        events=list(scoped(AuditEvent, tenant).filter(run_id=run.run_id).order_by("-observed_at", "-pk")[:200]),
    )


__all__ = ["BadCursor", "EventFilters", "RepairRow", "RunAudit", "event_page", "events_csv", "repair_rows", "run_audit"]
