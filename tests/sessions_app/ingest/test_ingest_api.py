"""POST /api/v1/snapshots: the key decides the tenant, retries store nothing twice, bad input changes nothing."""

import json

import pytest
from django.test import override_settings
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.models import Conversation, Run, Snapshot, SnapshotMessage, StoredMessage, TranscriptEntry
from sessions_app.tenancy.api_keys import create_api_key, revoke_api_key
from tests.agents import weather_messages
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db


def payload(history, **overrides):
    body = {
        "conversation_id": "conv-1",
        "run_id": "run-1",
        "agent": "weather",
        "step": 1,
        "state": "complete",
        "messages": ModelMessagesTypeAdapter.dump_python(history, mode="json"),
    }
    body.update(overrides)
    return body


@pytest.fixture
def server_key(tenant):
    return create_api_key(tenant, "server")[1]


def post(client, key, body, **extra):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}
    return client.post("/api/v1/snapshots", data=data, content_type="application/json", **headers, **extra)


def test_it_stores_a_snapshot_and_answers_201_with_ids(client, tenant, server_key):
    messages = weather_messages()
    response = post(client, server_key, payload(messages))
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["run_id"] == "run-1" and body["conversation_id"] == "conv-1"
    snapshot = Snapshot.objects.get(id=body["snapshot_id"])
    assert snapshot.tenant == tenant and snapshot.message_count == len(messages) and snapshot.source == "server"
    assert TranscriptEntry.objects.filter(conversation__external_id="conv-1").count() == len(messages)


def test_a_retry_answers_200_and_stores_nothing_twice(client, server_key):
    body = payload(weather_messages())
    first = post(client, server_key, body)
    before = row_counts()
    second = post(client, server_key, body)
    assert second.status_code == 200
    assert second.json()["snapshot_id"] == first.json()["snapshot_id"]
    assert row_counts() == before


def test_a_retry_with_the_harness_idempotency_key_is_a_repeat(client, server_key):
    post(client, server_key, payload(weather_messages(), idempotency_key="0:1:complete"))
    before = row_counts()
    again = post(client, server_key, payload(weather_messages()[:2], step=2, idempotency_key="0:1:complete"))
    assert again.status_code == 200
    assert row_counts() == before


def test_messages_are_stored_once_however_many_snapshots_repeat_them(client, server_key):
    messages = weather_messages()
    for step in range(1, len(messages) + 1):
        assert post(client, server_key, payload(messages[:step], step=step)).status_code == 201
    assert Snapshot.objects.count() == len(messages)
    assert sorted(len(ids) for ids in Snapshot.objects.values_list("message_ids", flat=True)) == list(
        range(1, len(messages) + 1)
    )
    assert SnapshotMessage.objects.count() == len(messages)  # a reference row for each message the first time
    assert StoredMessage.objects.count() == len(messages)


def test_the_key_decides_the_tenant_and_a_body_cannot_choose_another(client, tenant, other_tenant):
    other_key = create_api_key(other_tenant, "server")[1]
    response = post(client, other_key, payload(weather_messages(), tenant="acme", tenant_id=tenant.id))
    assert response.status_code == 201
    assert Conversation.objects.get().tenant == other_tenant


def test_the_same_run_id_in_two_tenants_stays_separate(client, tenant, other_tenant, server_key):
    other_key = create_api_key(other_tenant, "server")[1]
    assert post(client, server_key, payload(weather_messages())).status_code == 201
    assert post(client, other_key, payload(weather_messages())).status_code == 201
    assert Run.objects.filter(run_id="run-1").count() == 2


def test_a_client_key_marks_the_history_client_supplied(client, tenant):
    client_key = create_api_key(tenant, "client")[1]
    assert post(client, client_key, payload(weather_messages(), source="server")).status_code == 201
    assert Run.objects.get().source == "client"
    assert Snapshot.objects.get().source == "client"


@pytest.mark.parametrize(
    ("key", "reason"),
    [(None, "Missing API key"), ("sdk_s_not-a-real-key", "Invalid or revoked API key")],
)
def test_a_missing_or_unknown_key_answers_401_and_stores_nothing(client, tenant, key, reason):
    before = row_counts()
    response = post(client, key, payload(weather_messages()))
    assert response.status_code == 401
    assert reason in response.json()["error"]
    assert row_counts() == before


def test_a_revoked_key_answers_401(client, tenant):
    key, raw = create_api_key(tenant, "server")
    revoke_api_key(key)
    before = row_counts()
    assert post(client, raw, payload(weather_messages())).status_code == 401
    assert row_counts() == before


def test_invalid_json_is_rejected_with_a_clear_error(client, server_key):
    before = row_counts()
    response = post(client, server_key, '{"conversation_id": "c", "messages": [')
    assert response.status_code == 400
    assert response.json()["error"].startswith("Invalid JSON")
    assert row_counts() == before


def test_a_message_failing_validation_names_its_path(client, server_key):
    body = payload(weather_messages())
    del body["messages"][1]["parts"][0]["tool_name"]
    before = row_counts()
    response = post(client, server_key, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert "messages[1]" in error and "parts[0]" in error and "tool_name" in error
    assert row_counts() == before


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"conversation_id": ""}, "'conversation_id' is required"),
        ({"run_id": 7}, "'run_id' must be a string"),
        ({"state": "done"}, "'state' must be"),
        ({"step": "one"}, "'step' must be an integer"),
        ({"messages": {"not": "a list"}}, "'messages' must be a list"),
    ],
)
def test_malformed_fields_are_named(client, server_key, change, needle):
    before = row_counts()
    response = post(client, server_key, payload(weather_messages(), **change))
    assert response.status_code == 400
    assert needle in response.json()["error"]
    assert row_counts() == before


def test_a_payload_over_the_size_limit_answers_413(client, server_key):
    body = payload(weather_messages())
    with override_settings(SESSIONDESK_MAX_PAYLOAD_BYTES=200):
        before = row_counts()
        response = post(client, server_key, body)
    assert response.status_code == 413
    assert "200 bytes" in response.json()["error"]
    assert row_counts() == before


def test_a_run_id_of_another_conversation_answers_409_and_stores_nothing(client, server_key):
    assert post(client, server_key, payload(weather_messages())).status_code == 201
    before = row_counts()
    response = post(client, server_key, payload(weather_messages(), conversation_id="conv-2", step=9))
    assert response.status_code == 409
    assert "already belongs to conversation 'conv-1'" in response.json()["error"]
    assert row_counts() == before


def test_get_is_not_allowed(client, server_key):
    response = client.get("/api/v1/snapshots", HTTP_AUTHORIZATION=f"Bearer {server_key}")
    assert response.status_code == 405


def test_a_threaded_run_is_ordered_by_its_own_start_not_by_what_it_inherited(client, server_key):
    from tests.agents import weather_agent

    agent = weather_agent()
    first = agent.run_sync("Weather?", conversation_id="conv-t").all_messages()
    second = agent.run_sync("And tomorrow?", message_history=first).all_messages()
    # Run ids that sort the other way round: only the runs' own start times can order them.
    assert post(client, server_key, payload(second, conversation_id="conv-t", run_id="a-second")).status_code == 201
    assert post(client, server_key, payload(first, conversation_id="conv-t", run_id="z-first")).status_code == 201
    conversation = Conversation.objects.get(external_id="conv-t")
    assert conversation.message_count == len(second)
    order = list(TranscriptEntry.objects.filter(conversation=conversation).order_by("position").values_list(
        "run__run_id", flat=True))
    assert order == ["z-first"] * len(first) + ["a-second"] * (len(second) - len(first))


def test_an_explicit_start_time_must_be_an_aware_iso_datetime(client, server_key):
    before = row_counts()
    response = post(client, server_key, payload(weather_messages(), started_at="yesterday"))
    assert response.status_code == 400
    assert "'started_at' must be an ISO 8601 date-time" in response.json()["error"]
    assert row_counts() == before
