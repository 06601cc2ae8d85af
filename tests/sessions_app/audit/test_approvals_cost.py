"""An approval a run ended waiting on is decided once, when the answering run arrives: ingesting more runs into a
conversation whose run waits forever costs the same whatever its history, and never audits the waiting run again;
the answering run stores the decision, which reading then takes from the pending span, not the transcripts."""

from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from sessions_app.audit.vocabulary import Verdict
from sessions_app.ingest import service
from sessions_app.ingest.payloads import RuntimeSpanPayload, SnapshotPayload
from sessions_app.models import Run, RuntimeSpan, RunVerdict
from sessions_app.transcripts.runtime_spans import approvals_of

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def waiting_messages(call_id: str = "call-wipe") -> list[ModelMessage]:
    return [
        ModelRequest(
            parts=[SystemPromptPart("You keep the shop tidy."), UserPromptPart("Wipe the orders table.", timestamp=T0)]
        ),
        ModelResponse(parts=[ToolCallPart("wipe", {"table": "orders"}, tool_call_id=call_id)], timestamp=T0),
    ]


def wait(tenant, conversation: str, run_id: str, call_id: str = "call-wipe") -> None:
    """A run that ended waiting for approval of `call_id` (its OTLP run span's pending call)."""
    span = RuntimeSpanPayload(
        run_id=run_id,
        span_key=f"{run_id}-pending",
        kind=RuntimeSpan.Kind.APPROVAL_PENDING,
        started_at=T0,
        ended_at=T0,
        facts={"tool_call_id": call_id, "tool": "wipe", "wait": "approval"},
    )
    payload = SnapshotPayload(
        conversation, run_id, "shop", "complete", waiting_messages(call_id), step=1, started_at=T0
    )
    service.ingest_snapshots(tenant, [payload], source="server", via="api", runtime_spans=[span])


def another_run(conversation: str, i: int) -> SnapshotPayload:
    when = T0 + timedelta(minutes=i + 1)
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("You keep the shop tidy."), UserPromptPart(f"Question #{i}?", timestamp=when)]
        ),
        ModelResponse(parts=[ToolCallPart("look", {"n": i}, tool_call_id=f"look-{i}")], timestamp=when),
        ModelRequest(parts=[ToolReturnPart("look", f"found {i}", tool_call_id=f"look-{i}", timestamp=when)]),
        ModelResponse(parts=[TextPart(f"Answer #{i}.")], timestamp=when),
    ]
    return SnapshotPayload(conversation, f"{conversation}-r{i}", "shop", "complete", messages, step=1, started_at=when)


def answer(conversation: str, run_id: str, call_id: str = "call-wipe", minutes: int = 1) -> SnapshotPayload:
    when = T0 + timedelta(minutes=minutes)
    messages = [
        *waiting_messages(call_id),
        ModelRequest(parts=[ToolReturnPart("wipe", "wiped orders", tool_call_id=call_id)], timestamp=when),
        ModelResponse(parts=[TextPart("Done, as decided.")], timestamp=when),
    ]
    return SnapshotPayload(conversation, run_id, "shop", "complete", messages, step=1, started_at=when)


def ingest_one_more(tenant, conversation: str, history: int) -> tuple[int, set[str]]:
    """Queries and audited run ids of one more run's ingest into `conversation` holding `history` runs."""
    for i in range(history):
        service.ingest_snapshots(tenant, [another_run(conversation, i)], source="server", via="api")
    audited: set[str] = set()
    real = service.audit_runs

    def spy(tenant, runs, **kwargs):
        audited.update(run.run_id for run in runs)
        return real(tenant, runs, **kwargs)

    with mock.patch.object(service, "audit_runs", spy), CaptureQueriesContext(connection) as queries:
        service.ingest_snapshots(tenant, [another_run(conversation, history)], source="server", via="api")
    return len(queries), audited


def test_more_runs_into_a_conversation_waiting_forever_cost_the_same_and_leave_the_waiting_run(tenant):
    wait(tenant, "short", "short-wait")
    wait(tenant, "long", "long-wait")
    assert RunVerdict.objects.get(run__run_id="long-wait").verdict == Verdict.WAITING
    short, short_audited = ingest_one_more(tenant, "short", 5)
    long, long_audited = ingest_one_more(tenant, "long", 50)
    assert short_audited == {"short-r5"} and long_audited == {"long-r50"}
    assert short == long
    assert RunVerdict.objects.get(run__run_id="long-wait").verdict == Verdict.WAITING


def test_the_answering_run_stores_the_decision_and_reading_it_scans_no_transcript(tenant):
    wait(tenant, "conv", "waiting")
    service.ingest_snapshots(tenant, [another_run("conv", 0)], source="server", via="api")
    service.ingest_snapshots(tenant, [answer("conv", "continuing", minutes=5)], source="server", via="api")
    span = RuntimeSpan.objects.get(run__run_id="waiting", kind=RuntimeSpan.Kind.APPROVAL_PENDING)
    assert span.facts["state"] == "approved" and span.facts["decided_in_run"] == "continuing"
    assert span.facts["decided_at"] == (T0 + timedelta(minutes=5)).isoformat()
    assert RunVerdict.objects.get(run__run_id="waiting").verdict != Verdict.WAITING
    run = Run.objects.select_related("tenant").get(run_id="waiting")
    with CaptureQueriesContext(connection) as queries:
        (approval,) = approvals_of(run)
    assert approval.state == "approved" and approval.decided_in_run == "continuing"
    assert approval.decided_at == T0 + timedelta(minutes=5)
    assert len(queries) == 1 and "transcriptentry" not in queries[0]["sql"].lower()


def test_a_pending_span_arriving_after_its_answer_is_decided_on_arrival(tenant):
    service.ingest_snapshots(tenant, [answer("late", "continuing", minutes=5)], source="server", via="api")
    wait(tenant, "late", "waiting")
    (approval,) = approvals_of(Run.objects.select_related("tenant").get(run_id="waiting"))
    assert approval.state == "approved" and approval.decided_in_run == "continuing"


def test_the_backfill_decides_calls_answered_before_decisions_were_stored(tenant):
    from importlib import import_module

    from django.apps import apps

    wait(tenant, "old", "waiting")
    wait(tenant, "old", "forever", call_id="call-never")
    service.ingest_snapshots(tenant, [answer("old", "continuing", minutes=5)], source="server", via="api")
    for span in RuntimeSpan.objects.filter(kind=RuntimeSpan.Kind.APPROVAL_PENDING):  # as a database before 0021
        # Only the facts, by tenant and id: save() would write tenant_id too, which Citus refuses (distribution column).
        undecided = {k: v for k, v in span.facts.items() if k not in {"state", "decided_in_run", "decided_at"}}
        RuntimeSpan.objects.filter(tenant=tenant, pk=span.pk).update(facts=undecided)
    assert not RuntimeSpan.objects.filter(tenant=tenant, facts__has_key="state").exists()
    import_module("sessions_app.migrations.0022_approval_decisions").backfill(apps, None)
    decided = {s.run.run_id: s.facts for s in RuntimeSpan.objects.select_related("run")}
    assert decided["waiting"]["state"] == "approved" and decided["waiting"]["decided_in_run"] == "continuing"
    assert "state" not in decided["forever"]
