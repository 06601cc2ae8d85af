"""GET /api/v1/conversations/<id>/replay: the recovered history when the latest run is READY (200), the gravest
verdict and every finding with its guidance otherwise (409); one content-minimal audit event per request."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.audit import evidence
from sessions_app.audit.principals import principal_hash
from sessions_app.audit.vocabulary import Verdict, guidance_for
from sessions_app.models import AuditEvent
from sessions_app.tenancy.api_keys import create_api_key
from tests.sessions_app.audit.audit_cases import (
    ARGUMENT_MARKERS,
    RESULT_MARKERS,
    ingest,
    interrupted_history,
    mailer_agent,
    mailer_history,
    outcome_receipt,
)


@pytest.fixture
def server(tenant):
    return create_api_key(tenant, "server")


def _replay(client, key, conversation_id="c-1", **params):
    return client.get(f"/api/v1/conversations/{conversation_id}/replay", params, HTTP_AUTHORIZATION=f"Bearer {key}")


def _ready(tenant, conversation_id="c-1", run_id="r-1", **kwargs):
    messages = mailer_history(conversation_id)
    ingest(tenant, messages, run_id=run_id, conversation_id=conversation_id, **kwargs)
    evidence.add_receipt(tenant, outcome_receipt(run_id))
    return messages


def _events(tenant):
    return list(AuditEvent.objects.filter(tenant=tenant, event_class__startswith="replay_").order_by("id"))


def test_a_ready_conversation_answers_200_with_history_that_validates_back(client, tenant, server):
    key, raw = server
    messages = _ready(tenant, api_key=key)
    response = _replay(client, raw)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = response.json()
    assert (body["verdict"], body["conversation_id"], body["run_id"]) == (Verdict.READY, "c-1", "r-1")
    loaded = ModelMessagesTypeAdapter.validate_python(body["messages"])
    assert loaded == messages
    assert ModelMessagesTypeAdapter.dump_python(loaded, mode="json") == body["messages"]
    (event,) = _events(tenant)
    assert (event.event_class, event.verdict, event.run_id, event.conversation_id) == (
        "replay_allowed",
        Verdict.READY,
        "r-1",
        "c-1",
    )
    assert event.actor == f"api-key:{key.prefix}"


def test_an_unready_conversation_answers_409_with_every_finding_and_its_guidance(client, tenant, server):
    _, raw = server
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    response = _replay(client, raw)
    assert response.status_code == 409
    body = response.json()
    assert body["verdict"] == Verdict.INTERRUPTED_TOOL and "messages" not in body
    assert [f["code"] for f in body["findings"]] == [Verdict.INTERRUPTED_TOOL, Verdict.MISSING_OUTCOME_RECEIPT]
    assert body["findings"][0]["guidance"] == guidance_for(Verdict.INTERRUPTED_TOOL)
    assert not any(marker in response.content.decode() for marker in ARGUMENT_MARKERS + RESULT_MARKERS)
    (event,) = _events(tenant)
    assert (event.event_class, event.verdict) == ("replay_refused", Verdict.INTERRUPTED_TOOL)


def test_an_open_wait_refuses_the_replay_until_resolved_by_its_token(client, tenant, server):
    _, raw = server
    _ready(tenant)
    deadline = (timezone.now() + timedelta(hours=1)).isoformat()
    token = "approve-token-0123456789abcdef"
    evidence.add_wait(
        tenant, {"run_id": "r-1", "owner": "ops", "decision": "ok?", "deadline": deadline, "resume_token": token}
    )
    assert _replay(client, raw).json()["verdict"] == Verdict.WAITING
    evidence.resolve_wait(tenant, {"run_id": "r-1", "resume_token": token})
    assert _replay(client, raw).status_code == 200


def test_the_latest_run_decides(client, tenant, server):
    _, raw = server
    first = _ready(tenant)
    assert _replay(client, raw).status_code == 200
    # A later run of the same conversation, without an outcome receipt yet.
    later = mailer_agent().run_sync("And April", message_history=first, conversation_id="c-1").all_messages()
    ingest(tenant, later, run_id="r-2", conversation_id="c-1")
    response = _replay(client, raw)
    assert (response.status_code, response.json()["run_id"]) == (409, "r-2")
    assert response.json()["verdict"] == Verdict.MISSING_OUTCOME_RECEIPT
    evidence.add_receipt(tenant, outcome_receipt("r-2"))
    body = _replay(client, raw).json()
    assert ModelMessagesTypeAdapter.validate_python(body["messages"]) == later


def test_replay_for_another_principal_than_the_owner_is_scope_drift(client, tenant, server):
    _, raw = server
    _ready(tenant, principal="user:dana")
    assert _replay(client, raw, principal="user:dana").status_code == 200
    other = _replay(client, raw, principal="user:mallory")
    assert other.status_code == 409 and other.json()["verdict"] == Verdict.SCOPE_DRIFT
    (drift,) = [f for f in other.json()["findings"] if f["code"] == Verdict.SCOPE_DRIFT]
    assert drift["detail"].startswith("Replay was asked for principal ")
    assert drift["guidance"] == guidance_for(Verdict.SCOPE_DRIFT)
    nobody = _replay(client, raw)
    assert nobody.status_code == 409 and "Replay was asked for no principal" in nobody.content.decode()
    events = _events(tenant)
    assert [e.event_class for e in events] == ["replay_allowed", "replay_refused", "replay_refused"]
    assert events[1].principal_hash == principal_hash(tenant.id, "user:mallory")
    assert events[2].principal_hash == ""
    stored = json.dumps(list(AuditEvent.objects.values()), default=str)
    assert "mallory" not in stored and "dana" not in stored


def test_a_run_written_for_another_principal_is_refused_even_for_the_owner(client, tenant, server):
    _, raw = server
    first = _ready(tenant, principal="user:dana")
    later = mailer_agent().run_sync("And April", message_history=first, conversation_id="c-1").all_messages()
    ingest(tenant, later, run_id="r-2", conversation_id="c-1", principal="user:mallory")
    evidence.add_receipt(tenant, outcome_receipt("r-2"))
    response = _replay(client, raw, principal="user:dana")
    assert response.status_code == 409 and response.json()["verdict"] == Verdict.SCOPE_DRIFT
    assert "written for principal" in response.content.decode()


def test_a_client_key_gets_only_history_it_wrote_and_that_is_untrusted(client, tenant, server):
    server_key, server_raw = server
    client_key, client_raw = create_api_key(tenant, "client")
    _, other_client_raw = create_api_key(tenant, "client")
    ingest(
        tenant, mailer_history("c-mine"), run_id="r-mine", conversation_id="c-mine", source="client", api_key=client_key
    )
    evidence.add_receipt(tenant, outcome_receipt("r-mine"))
    _ready(tenant, conversation_id="c-server", run_id="r-server", api_key=server_key)

    mine = _replay(client, client_raw, "c-mine")
    assert mine.status_code == 409 and mine.json()["verdict"] == Verdict.UNTRUSTED_HISTORY
    assert mine.json()["findings"][0]["guidance"] == guidance_for(Verdict.UNTRUSTED_HISTORY)
    # History this client key did not write answers exactly like a missing conversation.
    theirs = _replay(client, other_client_raw, "c-mine")
    servers = _replay(client, client_raw, "c-server")
    missing = _replay(client, client_raw, "c-nowhere")
    assert theirs.status_code == servers.status_code == missing.status_code == 404
    assert servers.json()["error"].replace("c-server", "X") == missing.json()["error"].replace("c-nowhere", "X")
    # A server key may ask for any conversation of its tenant.
    assert _replay(client, server_raw, "c-server").status_code == 200
    assert _replay(client, server_raw, "c-mine").json()["verdict"] == Verdict.UNTRUSTED_HISTORY


def test_another_tenants_conversation_is_404_like_a_missing_one(client, tenant, other_tenant, server):
    _, raw = server
    _ready(other_tenant, conversation_id="c-theirs", run_id="r-theirs")
    theirs = _replay(client, raw, "c-theirs")
    missing = _replay(client, raw, "c-nowhere")
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["error"].replace("c-theirs", "X") == missing.json()["error"].replace("c-nowhere", "X")
    assert [(e.event_class, e.verdict) for e in _events(tenant)] == [("replay_refused", "")] * 2
    assert _events(other_tenant) == []


@pytest.mark.parametrize(
    ("principal", "message"),
    [("", "'principal' must not be empty"), ("x" * 501, "'principal' is longer than 500")],
)
def test_a_bad_principal_is_400_naming_the_field(client, tenant, server, principal, message):
    _, raw = server
    _ready(tenant)
    response = _replay(client, raw, principal=principal)
    assert response.status_code == 400 and message in response.json()["error"]


def test_replay_needs_a_key_and_a_get(client, tenant, server):
    _, raw = server
    assert client.get("/api/v1/conversations/c-1/replay").status_code == 401
    response = client.post("/api/v1/conversations/c-1/replay", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 405
