"""GET /api/v1/search and GET /api/v1/conversations/<id>/messages with a tenant API key."""

import pytest

from search_app import folding
from sessions_app.tenancy.api_keys import create_api_key
from tests.search_app.factories import add_messages, make_conversation, make_conversation_with, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client, tenant):
    _, raw_key = create_api_key(tenant, "server")

    def get(path, **params):
        return client.get(path, params, HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    return get


@pytest.fixture
def data(tenant, other_tenant):
    conversation = make_conversation(tenant, "conv-1")
    run = make_run(conversation, "run-1")
    add_messages(run, [f"message {i} about the wren" if i == 6 else f"message {i}" for i in range(12)])
    make_conversation_with(other_tenant, ["wren of globex"], external_id="conv-x", run_id="run-x")
    folding.fold_tenant(tenant.id)  # all in blocks: nothing left to index


def test_search_answers_ranked_results_with_provenance(api, data):
    body = api("/api/v1/search", q="wren", conversation_id="conv-1").json()
    assert body["indexing"] is False and body["truncated"] is False
    (hit,) = body["results"]
    assert (hit["conversation_id"], hit["run_id"], hit["position"], hit["role"]) == ("conv-1", "run-1", 6, "user")
    assert hit["snippet_html"] == "message 6 about the <mark>wren</mark>"
    assert hit["timestamp"].startswith("2026-01-01T00:06:00")


def test_search_needs_an_api_key(client, data):
    assert client.get("/api/v1/search", {"q": "wren", "conversation_id": "conv-1"}).status_code == 401


def test_search_without_a_conversation_id_says_why(api, data):
    body = api("/api/v1/search", q="wren").json()
    assert body["results"] == [] and "needs a conversation id" in body["message"]


def test_tenant_scope_never_reaches_another_tenant(api, data):
    body = api("/api/v1/search", q="wren", scope="tenant").json()
    assert [hit["conversation_id"] for hit in body["results"]] == ["conv-1"]


def test_another_tenants_conversation_answers_like_a_missing_one(api, data):
    theirs = api("/api/v1/search", q="wren", conversation_id="conv-x")
    missing = api("/api/v1/search", q="wren", conversation_id="conv-y")
    assert theirs.status_code == missing.status_code == 200
    assert theirs.json()["message"].replace("conv-x", "?") == missing.json()["message"].replace("conv-y", "?")


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({"q": ""}, "The query is empty"),
        ({"q": "x" * 4097}, "the limit is 4096"),
        ({"q": "wren", "limit": "many"}, "'limit' must be a whole number"),
        ({"q": "wren", "limit": "30"}, "from 1 to 25"),
        ({"q": "wren", "scope": "tenants"}, "Unknown scope 'tenants' for an API key"),
        ({"q": "wren", "role": "robot"}, "Unknown role 'robot'"),
        ({"q": "wren", "since": "yesterday"}, "'since' must be an ISO 8601 time"),
    ],
)
def test_bad_parameters_answer_400_naming_the_problem(api, data, params, problem):
    response = api("/api/v1/search", conversation_id="conv-1", **params)
    assert response.status_code == 400
    assert problem in response.json()["error"]


def test_filters_by_role_and_time(api, data):
    assert api("/api/v1/search", q="wren", conversation_id="conv-1", role="assistant").json()["results"] == []
    late = api("/api/v1/search", q="wren", conversation_id="conv-1", since="2026-01-01T00:07:00Z").json()
    assert late["results"] == []


def test_search_refuses_other_methods(api, client, tenant, data):
    _, raw_key = create_api_key(tenant, "server")
    response = client.post("/api/v1/search", {"q": "wren"}, HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    assert response.status_code == 405


def test_a_hit_opens_in_its_context(api, data):
    body = api("/api/v1/conversations/conv-1/messages", around=6, before=2, after=1).json()
    assert [m["position"] for m in body["messages"]] == [4, 5, 6, 7]
    assert body["messages"][2]["text"] == "message 6 about the wren"
    assert body["truncated"] is False


def test_context_of_another_tenants_conversation_is_404_like_a_missing_one(api, data):
    theirs = api("/api/v1/conversations/conv-x/messages", around=0)
    missing = api("/api/v1/conversations/conv-y/messages", around=0)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["error"].replace("conv-x", "?") == missing.json()["error"].replace("conv-y", "?")


def test_context_parameters_are_checked(api, data):
    assert "'around' is required" in api("/api/v1/conversations/conv-1/messages").json()["error"]
    response = api("/api/v1/conversations/conv-1/messages", around=3, before=99)
    assert response.status_code == 400 and "from 0 to 25" in response.json()["error"]


def test_context_masks_credentials(api, tenant):
    run = make_run(make_conversation(tenant, "sec"), "run-sec")
    add_messages(run, ["deploy with GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"])
    body = api("/api/v1/conversations/sec/messages", around=0).json()
    assert body["messages"][0]["text"] == "deploy with GITHUB_TOKEN=***"


def test_the_openapi_document_declares_the_lower_bound_flag_and_answers_carry_it(client, api, data):
    answer = client.get("/api/v1/openapi.json").json()["paths"]["/api/v1/search"]["get"]["responses"]["200"]
    schema = answer["content"]["application/json"]["schema"]
    assert schema["properties"]["total_is_lower_bound"]["type"] == "boolean"
    assert "total_is_lower_bound" in schema["required"]
    body = api("/api/v1/search", q="wren", conversation_id="conv-1").json()
    assert (body["total_matches"], body["total_is_lower_bound"]) == (1, False)
