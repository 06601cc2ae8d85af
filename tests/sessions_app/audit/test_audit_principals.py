"""A snapshot's principal: validated, stored only as a keyed hash; the first one owns the conversation, and a
run written for another principal is SCOPE DRIFT."""

import hashlib
import json

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.audit.principals import principal_hash
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import Conversation, RunVerdict, Snapshot
from sessions_app.tenancy.api_keys import create_api_key
from tests.rowcounts import row_counts
from tests.sessions_app.audit.audit_cases import ingest, mailer_agent, mailer_history


def test_the_principal_is_stored_as_a_keyed_hash_and_the_first_one_owns_the_conversation(tenant):
    run = ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1", principal="user:dana")
    snapshot = Snapshot.objects.get(run=run)
    expected = principal_hash(tenant.id, "user:dana")
    assert snapshot.principal_hash == expected and len(expected) == 64
    assert Conversation.objects.get(pk=run.conversation_id).owner_principal_hash == expected
    # Keyed: not a plain SHA-256 anyone could recompute without the server's secret.
    assert expected != hashlib.sha256(b"user:dana").hexdigest()
    assert principal_hash(tenant.id, "user:dana") != principal_hash(tenant.id + 1, "user:dana")


def test_a_run_written_for_another_principal_than_the_owner_is_scope_drift(tenant):
    first = mailer_history("c-1")
    ingest(tenant, first, run_id="r-1", conversation_id="c-1", principal="user:dana")
    later = mailer_agent().run_sync("And April", message_history=first, conversation_id="c-1").all_messages()
    run = ingest(tenant, later, run_id="r-2", conversation_id="c-1", principal="user:mallory")
    stored = RunVerdict.objects.get(run=run)
    assert stored.verdict == Verdict.SCOPE_DRIFT
    (finding,) = [f for f in stored.findings if f["gate"] == "conversation_scope"]
    assert "written for principal" in finding["detail"] and "mallory" not in json.dumps(stored.findings)
    # The owner did not change: the first principal keeps it.
    owner = Conversation.objects.get(tenant=tenant, external_id="c-1").owner_principal_hash
    assert owner == principal_hash(tenant.id, "user:dana")


@pytest.mark.parametrize(
    ("principal", "message"),
    [
        (7, "'principal' must be a string"),
        ("   ", "'principal' must not be empty"),
        ("x" * 501, "'principal' is longer than 500 characters"),
        ("a\nb", "'principal' must be a single line"),
    ],
)
def test_a_bad_principal_is_refused_with_400_and_changes_nothing(client, tenant, principal, message):
    _, key = create_api_key(tenant, "server")
    body = {
        "conversation_id": "c-1",
        "run_id": "r-1",
        "principal": principal,
        "messages": json.loads(ModelMessagesTypeAdapter.dump_json(mailer_history("c-1"))),
    }
    before = row_counts()
    response = client.post(
        "/api/v1/snapshots", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert response.status_code == 400 and message in response.json()["error"]
    assert row_counts() == before


def test_the_api_records_the_key_and_the_principal_hash_of_each_snapshot(client, tenant):
    key, raw = create_api_key(tenant, "server")

    body = {
        "conversation_id": "c-1",
        "run_id": "r-1",
        "principal": "tenant-user-42",
        "messages": json.loads(ModelMessagesTypeAdapter.dump_json(mailer_history("c-1"))),
    }
    response = client.post(
        "/api/v1/snapshots", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}"
    )
    assert response.status_code == 201
    snapshot = Snapshot.objects.get()
    assert snapshot.api_key_id == key.id
    assert snapshot.principal_hash == principal_hash(tenant.id, "tenant-user-42")
    assert "tenant-user-42" not in json.dumps(list(Snapshot.objects.values()), default=str)
