"""POST /api/v1/merges: an explicit merge of two conversation ids (SPEC gate 5), with a server key only; another
tenant's conversation answers as a missing one; refused input changes no row."""

import json

import pytest

from sessions_app.api.auth import SERVER_KEY_REQUIRED
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import AuditEvent, ConversationMerge, RunVerdict
from sessions_app.tenancy.api_keys import create_api_key
from tests.sessions_app.api.test_hostile_input import snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversations(tenant, other_tenant):
    ingest_snapshots(
        tenant, [parse_snapshot(snapshot(conversation_id="c-1", run_id="r-1"))], source="server", via="api"
    )
    ingest_snapshots(
        other_tenant, [parse_snapshot(snapshot(conversation_id="c-x", run_id="r-x"))], source="server", via="api"
    )


def merge(client, key, body):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post("/api/v1/merges", data, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")


def rows():
    return ConversationMerge.objects.count(), AuditEvent.objects.count(), RunVerdict.objects.count()


def test_a_merge_is_recorded_once_and_answered_201(client, tenant, conversations):
    key = create_api_key(tenant, "server")[1]
    merges_before = ConversationMerge.objects.count()
    response = merge(client, key, {"conversation_id": "c-1", "merged_conversation_id": "c-0"})
    assert response.status_code == 201
    body = response.json()
    assert body == {"merge_id": body["merge_id"], "conversation_id": "c-1", "merged_conversation_id": "c-0"}
    stored = ConversationMerge.objects.get()
    assert (stored.id, stored.tenant, stored.conversation.external_id) == (body["merge_id"], tenant, "c-1")
    assert stored.actor.startswith("api-key:")
    assert ConversationMerge.objects.count() == merges_before + 1

    again = merge(client, key, {"conversation_id": "c-1", "merged_conversation_id": "c-0"})
    assert (again.status_code, again.json()) == (201, body)
    assert ConversationMerge.objects.count() == merges_before + 1


def test_a_client_key_may_not_merge_and_changes_nothing(client, tenant, conversations):
    key = create_api_key(tenant, "client")[1]
    before = rows()
    response = merge(client, key, {"conversation_id": "c-1", "merged_conversation_id": "c-0"})
    assert (response.status_code, response.json()) == (403, {"error": SERVER_KEY_REQUIRED})
    assert rows() == before


def test_another_tenants_conversation_answers_like_a_missing_one(client, tenant, conversations):
    key = create_api_key(tenant, "server")[1]
    before = rows()
    theirs = merge(client, key, {"conversation_id": "c-x", "merged_conversation_id": "c-0"})
    missing = merge(client, key, {"conversation_id": "c-y", "merged_conversation_id": "c-0"})
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["error"].replace("c-x", "?") == missing.json()["error"].replace("c-y", "?")
    assert rows() == before


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"conversation_id": "c-1"}, "'merged_conversation_id' is required"),
        ({"conversation_id": "c-1", "merged_conversation_id": ""}, "'merged_conversation_id' is required"),
        ({"conversation_id": "c-1", "merged_conversation_id": "c-1"}, "needs another, non-empty conversation id"),
        ({"conversation_id": "c-1", "merged_conversation_id": "c\n2"}, "control character"),
        ({"conversation_id": "c-1", "merged_conversation_id": "x" * 201}, "longer than 200"),
        ({"merged_conversation_id": "c-0"}, "'conversation_id' is required"),
        ([], "must be a JSON object"),
        ("{not json", "Invalid JSON"),
    ],
)
def test_bad_input_is_a_400_naming_the_problem_and_changes_nothing(client, tenant, conversations, body, problem):
    key = create_api_key(tenant, "server")[1]
    before = rows()
    response = merge(client, key, body)
    assert response.status_code == 400
    assert problem in response.json()["error"]
    assert rows() == before


def test_a_merge_is_in_the_openapi_document(client):
    operation = client.get("/api/v1/openapi.json").json()["paths"]["/api/v1/merges"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MergeInput"
    }
    assert {"201", "400", "403", "404"} <= set(operation["responses"])
