"""`update_rows` saves the fields of many rows of one tenant as `bulk_update` does (on PostgreSQL in one statement
joining arrays, elsewhere through `bulk_update`): text, choices, times and nulls, integers and JSON, only the
tenant's rows, only the fields named. `increment_rows` adds each row its own amounts, likewise."""

from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Run, RunState, RunVerdict
from sessions_app.tenancy.bulk_update import increment_rows, update_rows
from tests.agents import weather_messages
from tests.factories import make_tenant

pytestmark = pytest.mark.django_db


def _runs(tenant, count):
    messages = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    for n in range(count):
        payload = {"conversation_id": f"c{n}", "run_id": f"{tenant.slug}-r{n}", "state": "complete"}
        payload["messages"] = messages
        ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")
    return list(Run.objects.filter(tenant=tenant).order_by("pk"))


def test_update_rows_saves_the_named_fields_of_the_tenants_rows():
    tenant, other = make_tenant(), make_tenant()
    runs, others = _runs(tenant, 3), _runs(other, 1)
    when = datetime(2026, 12, 6, 1, 2, 3, 456789, tzinfo=UTC)
    for n, run in enumerate(runs):
        run.agent_name = f"agent ü {n}"
        run.state = RunState.INTERRUPTED
        run.finished_at = None if n == 0 else when
        run.duration_ms = 1000 * n
        run.source = "client"  # not named: stays as stored
    update_rows(Run, tenant.pk, [*runs, *others], ["agent_name", "state", "finished_at", "duration_ms"])
    stored = list(Run.objects.filter(tenant=tenant).order_by("pk"))
    assert [(r.agent_name, r.state, r.finished_at, r.duration_ms, r.source) for r in stored] == [
        ("agent ü 0", RunState.INTERRUPTED, None, 0, "server"),
        ("agent ü 1", RunState.INTERRUPTED, when, 1000, "server"),
        ("agent ü 2", RunState.INTERRUPTED, when, 2000, "server"),
    ]
    assert Run.objects.get(pk=others[0].pk).agent_name == others[0].agent_name  # another tenant's row: untouched


def test_update_rows_saves_json_and_nulls():
    tenant = make_tenant()
    _runs(tenant, 2)
    verdicts = list(RunVerdict.objects.filter(tenant=tenant).order_by("pk"))
    findings = [[{"key": "a", "detail": "naïve \"quoted\" \\ text", "nested": [1, None]}], []]
    for verdict, value in zip(verdicts, findings, strict=True):
        verdict.findings = value
        verdict.repair_count = 7
        verdict.recheck_at = None
    update_rows(RunVerdict, tenant.pk, verdicts, ["findings", "repair_count", "recheck_at"])
    stored = list(RunVerdict.objects.filter(tenant=tenant).order_by("pk"))
    assert [(v.findings, v.repair_count, v.recheck_at) for v in stored] == [
        (findings[0], 7, None),
        (findings[1], 7, None),
    ]


def test_increment_rows_adds_to_each_row_its_own_amounts():
    tenant, other = make_tenant(), make_tenant()
    runs, others = _runs(tenant, 3), _runs(other, 1)
    before = {r.pk: (r.turn_count, r.input_tokens) for r in Run.objects.filter(tenant=tenant)}
    deltas = {
        runs[0].pk: {"turn_count": 2, "input_tokens": -5},
        runs[1].pk: {"turn_count": 0, "input_tokens": 0},  # nothing to add: not written
        runs[2].pk: {"input_tokens": 10**10},
        others[0].pk: {"turn_count": 100},  # another tenant's row: untouched
    }
    increment_rows(Run, tenant.pk, deltas, ["turn_count", "input_tokens"])
    after = {r.pk: (r.turn_count, r.input_tokens) for r in Run.objects.filter(tenant=tenant)}
    assert after == {
        runs[0].pk: (before[runs[0].pk][0] + 2, before[runs[0].pk][1] - 5),
        runs[1].pk: before[runs[1].pk],
        runs[2].pk: (before[runs[2].pk][0], before[runs[2].pk][1] + 10**10),
    }
    assert Run.objects.get(pk=others[0].pk).turn_count == others[0].turn_count
