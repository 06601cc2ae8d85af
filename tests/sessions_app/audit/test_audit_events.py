"""Audit events: one per finding, content-minimal, append-only, and listable per tenant."""

import pytest
from django.db import connection

from sessions_app.audit import events, listing, service
from sessions_app.audit.digests import hash_tool_call_id
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import AuditEvent
from tests.sessions_app.audit.audit_cases import (
    ARGUMENT_MARKERS,
    CARD_CALL_ID,
    RESULT_MARKERS,
    history_with_orphan_result,
    history_without_system_prompt,
    ingest,
    interrupted_history,
    mailer_history,
    mixed_conversation_history,
)


def _ingest_every_failing_case(tenant):
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    ingest(tenant, history_with_orphan_result("c-2"), run_id="r-2", conversation_id="c-2")
    ingest(tenant, mixed_conversation_history("c-3a", "c-3"), run_id="r-3", conversation_id="c-3")
    ingest(tenant, history_without_system_prompt("c-4"), run_id="r-4", conversation_id="c-4")
    ingest(tenant, mailer_history("c-5"), run_id="r-5", conversation_id="c-5", source="client")


def test_no_audit_event_holds_a_tool_argument_or_result(tenant):
    _ingest_every_failing_case(tenant)
    classes = set(AuditEvent.objects.filter(tenant=tenant).values_list("event_class", flat=True))
    assert {
        EventClass.INTERRUPTED_SYNTHESIZED,
        EventClass.ORPHAN_REMOVED,
        EventClass.SCOPE_DRIFT,
        EventClass.PROMPT_GAP,
        EventClass.UNTRUSTED_HISTORY,
        EventClass.MISSING_RECEIPT,
    } <= classes
    table = AuditEvent._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table}")  # every column of every row, as the database holds it
        rows = cursor.fetchall()
    dumped = "\n".join(repr(row) for row in rows)
    for marker in ARGUMENT_MARKERS + RESULT_MARKERS + (CARD_CALL_ID,):
        assert marker not in dumped


def test_an_interrupted_call_is_recorded_with_its_hashed_tool_call_id(tenant):
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    event = AuditEvent.objects.get(tenant=tenant, event_class=EventClass.INTERRUPTED_SYNTHESIZED)
    assert (event.run_id, event.conversation_id) == ("r-1", "c-1")
    assert event.tool_call_hash == hash_tool_call_id(CARD_CALL_ID)


def test_re_auditing_and_reading_write_each_finding_once(tenant):
    run = ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    before = AuditEvent.objects.filter(tenant=tenant).count()
    assert before == 2  # interrupted call + missing receipt
    service.audit_run(run)
    service.audit_run(run)
    service.audit_report(run)
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    assert AuditEvent.objects.filter(tenant=tenant).count() == before


def test_a_new_finding_on_a_later_snapshot_is_recorded(tenant):
    run = ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    assert list(AuditEvent.objects.filter(run_id="r-1").values_list("event_class", flat=True)) == [
        EventClass.MISSING_RECEIPT
    ]
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    run.refresh_from_db()
    assert set(AuditEvent.objects.filter(run_id="r-1").values_list("event_class", flat=True)) == {
        EventClass.MISSING_RECEIPT,
        EventClass.INTERRUPTED_SYNTHESIZED,
    }


def test_audit_events_are_append_only(tenant):
    event = events.record_event(tenant, EventClass.KEY_CREATED, actor="admin@acme.test")
    with pytest.raises(TypeError, match="append-only"):
        event.save()
    with pytest.raises(TypeError, match="append-only"):
        event.delete()
    with pytest.raises(TypeError, match="append-only"):
        AuditEvent.objects.filter(tenant=tenant).update(actor="someone else")
    with pytest.raises(TypeError, match="append-only"):
        AuditEvent.objects.filter(tenant=tenant).delete()
    assert AuditEvent.objects.get(pk=event.pk).actor == "admin@acme.test"


def test_an_unknown_event_class_is_refused_and_nothing_is_written(tenant):
    with pytest.raises(ValueError, match="Unknown audit event class"):
        events.record_event(tenant, "coffee_break")
    assert AuditEvent.objects.count() == 0


def test_events_list_filters_by_class_run_and_conversation_within_the_tenant(tenant, other_tenant):
    _ingest_every_failing_case(tenant)
    ingest(other_tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    events.record_event(tenant, EventClass.EXPORT, actor="admin@acme.test", conversation_id="c-2")

    interrupted = events.list_audit_events(tenant, event_classes=[EventClass.INTERRUPTED_SYNTHESIZED])
    assert [(e.tenant_id, e.run_id) for e in interrupted] == [(tenant.id, "r-1")]
    assert {e.event_class for e in events.list_audit_events(tenant, run_id="r-2")} == {
        EventClass.ORPHAN_REMOVED,
        EventClass.MISSING_RECEIPT,
    }
    assert EventClass.EXPORT in {e.event_class for e in events.list_audit_events(tenant, conversation_id="c-2")}
    everything = events.list_audit_events(tenant, limit=500)
    assert all(e.tenant_id == tenant.id for e in everything)
    page = events.list_audit_events(tenant, limit=3)
    rest = events.list_audit_events(tenant, limit=500, before_id=page[-1].id)
    assert len(page) + len(rest) == len(everything)
    with pytest.raises(ValueError, match="coffee"):
        events.list_audit_events(tenant, event_classes=["coffee"])


def test_repairs_are_listed_across_the_tenant_with_tool_names_and_guidance(tenant, other_tenant):
    _ingest_every_failing_case(tenant)
    ingest(other_tenant, interrupted_history("c-9"), run_id="r-9", conversation_id="c-9", state="interrupted")
    repairs = listing.list_repairs(tenant)
    assert sorted((r.run_id, r.code, r.tool_name) for r in repairs) == [
        ("r-1", "INTERRUPTED TOOL", "charge_card"),
        ("r-2", "ORPHAN RESULT REMOVED", "send_email"),
    ]
    assert all(r.guidance for r in repairs)
