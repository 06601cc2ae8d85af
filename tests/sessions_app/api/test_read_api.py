"""The read API over a compacted real-harness conversation: the transcript in pages is the export's JSON Lines,
row for row (server keys only, each page an export in the audit log); the audit log pages newest first; the
conversation list's triage columns; bad input a 400 naming it with nothing written."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import AuditEvent
from sessions_app.tenancy.api_keys import create_api_key
from tests.scenarios import run_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def server_key(tenant):
    store = InMemoryStepStore()
    run_scenario("summarizing", store, conversation_id="conv-read")
    ingest_snapshots(tenant, [parse_snapshot(p) for p in store_as_payloads(store)], source="server", via="import")
    return create_api_key(tenant, "server")[1]


def _get(client, path, key, **params):
    return client.get(path, params, headers={"Authorization": f"Bearer {key}"})


def test_transcript_pages_are_the_export_s_rows(client, server_key):
    out = StringIO()
    call_command(
        "export_transcript", "--tenant", "acme", "--conversation", "conv-read", "--format", "jsonl", stdout=out
    )
    exported = [json.loads(line) for line in out.getvalue().splitlines()]
    rows, cursor, pages = [], None, 0
    while True:
        params = {"limit": 5, **({"cursor": cursor} if cursor else {})}
        body = _get(client, "/api/v1/conversations/conv-read/transcript", server_key, **params).json()
        rows += body["messages"]
        pages += 1
        if not (cursor := body["next_cursor"]):
            break
    assert rows == exported and pages == -(-len(exported) // 5)
    exports = AuditEvent.objects.filter(event_class="export", conversation_id="conv-read").count()
    assert exports == pages


def test_a_client_key_may_not_read_transcripts_or_the_audit_log(client, tenant, server_key):
    _, client_key = create_api_key(tenant, "client")
    assert _get(client, "/api/v1/conversations/conv-read/transcript", client_key).status_code == 403
    assert _get(client, "/api/v1/audit-events", client_key).status_code == 403


def test_the_audit_log_pages_newest_first(client, server_key):
    for _ in range(3):
        _get(client, "/api/v1/conversations/conv-read/transcript", server_key, limit=500)
    first = _get(client, "/api/v1/audit-events", server_key, **{"class": "export", "limit": 2}).json()
    second = _get(client, "/api/v1/audit-events", server_key, cursor=first["next_cursor"], **{"class": "export"})
    ids = [e["id"] for e in first["events"] + second.json()["events"]]
    assert len(ids) == 3 and ids == sorted(ids, reverse=True) and second.json()["next_cursor"] is None


def test_the_list_s_triage_columns(client, server_key):
    (row,) = _get(client, "/api/v1/conversations", server_key).json()["conversations"]
    assert row["conversation_id"] == "conv-read" and row["runs"] == 1
    assert row["turns"] >= 1 and row["tool_calls"] >= 1 and row["tokens"] > 0 and row["worst_verdict"]


@pytest.mark.parametrize(
    ("path", "params", "problem"),
    [
        ("/api/v1/conversations", {"limit": "0"}, "'limit' must be a whole number from 1 to 100, got 0."),
        ("/api/v1/conversations", {"verdict": "nope"}, "Unknown verdict 'nope'"),
        ("/api/v1/conversations", {"cursor": "@@"}, "not valid"),
        ("/api/v1/audit-events", {"class": "nope"}, "Unknown class 'nope'"),
        ("/api/v1/audit-events", {"cursor": "x1"}, "not valid"),
        ("/api/v1/conversations/conv-read/transcript", {"cursor": "-1"}, "not valid"),
    ],
)
def test_bad_input_is_a_400_naming_it_and_writes_nothing(client, server_key, path, params, problem):
    before = AuditEvent.objects.count()
    response = _get(client, path, server_key, **params)
    assert response.status_code == 400 and problem in response.json()["error"]
    assert AuditEvent.objects.count() == before
