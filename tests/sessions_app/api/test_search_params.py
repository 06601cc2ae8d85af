"""The search endpoints' query parameters are declared once: the OpenAPI document carries search's own limits,
and the endpoints refuse just outside them and accept just inside."""

import pytest

from search_app.context import MAX_CONTEXT_SIDE
from search_app.query import MAX_QUERY_CHARS
from search_app.validation import MAX_LIMIT
from sessions_app.api.openapi import document, query_parameters
from sessions_app.api.search_params import ContextParams, SearchParams
from sessions_app.tenancy.api_keys import create_api_key
from tests.search_app.factories import add_messages, make_conversation, make_run


def schemas(path):
    return {p["name"]: p["schema"] for p in document()["paths"][path]["get"]["parameters"] if p["in"] == "query"}


def test_the_document_states_the_limits_the_code_enforces():
    search = schemas("/api/v1/search")
    assert search["q"]["maxLength"] == MAX_QUERY_CHARS
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, MAX_LIMIT)
    assert search["scope"]["enum"] == ["conversation", "run", "tenant"]
    context = schemas("/api/v1/conversations/{conversation_id}/messages")
    for side in ("before", "after"):
        assert (context[side]["minimum"], context[side]["maximum"]) == (0, MAX_CONTEXT_SIDE)
    assert context["around"]["minimum"] == 0


def test_every_declared_parameter_is_in_the_document_and_only_those():
    for model in (SearchParams, ContextParams):
        declared = [field.alias or name for name, field in model.model_fields.items()]
        assert [p["name"] for p in query_parameters(model)] == declared
    around = next(p for p in query_parameters(ContextParams) if p["name"] == "around")
    assert around["required"] is True


def test_the_document_describes_otlp_traces():
    operation = document()["paths"]["/v1/traces"]["post"]
    assert set(operation["requestBody"]["content"]) == {"application/x-protobuf", "application/json"}
    assert set(operation["responses"]["200"]["content"]) == {"application/x-protobuf", "application/json"}


@pytest.fixture
def api(client, tenant):
    run = make_run(make_conversation(tenant, "conv-1"), "run-1")
    add_messages(run, [f"wren {i}" for i in range(40)])
    raw_key = create_api_key(tenant, "server")[1]

    def get(path, **params):
        return client.get(path, params, HTTP_AUTHORIZATION=f"Bearer {raw_key}")

    return get


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "status", "problem"),
    [
        ({"limit": MAX_LIMIT}, 200, ""),
        ({"limit": MAX_LIMIT + 1}, 400, f"'limit' must be a whole number from 1 to {MAX_LIMIT}, got {MAX_LIMIT + 1}."),
        ({"limit": 0}, 400, "from 1 to"),
        ({"limit": "1e3"}, 400, "got '1e3'"),
        ({"limit": ""}, 200, ""),
        ({"q": "wren " * (MAX_QUERY_CHARS // 5)}, 200, ""),
        ({"q": "w" * (MAX_QUERY_CHARS + 1)}, 400, f"the limit is {MAX_QUERY_CHARS}"),
        ({"cursor": ""}, 400, "The cursor is not valid"),
        ({"until": "2026-01-01T00:00:00"}, 400, "'until' must be an ISO 8601 time with a timezone"),
        ({"role": "user,assistant", "since": "2026-01-01T00:00:00+00:00"}, 200, ""),
    ],
)
def test_search_parameters_at_their_limits(api, params, status, problem):
    response = api("/api/v1/search", q=params.pop("q", "wren"), conversation_id="conv-1", **params)
    assert response.status_code == status, response.content[:300]
    if problem:
        assert problem in response.json()["error"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "status", "problem"),
    [
        ({"around": 20, "before": MAX_CONTEXT_SIDE, "after": MAX_CONTEXT_SIDE}, 200, ""),
        (
            {"around": 20, "after": MAX_CONTEXT_SIDE + 1},
            400,
            f"'after' must be a whole number from 0 to {MAX_CONTEXT_SIDE}",
        ),
        ({"around": -1}, 400, "'around' must be a whole number from 0"),
        ({"around": "x" * 13}, 400, "'around' must be a whole number"),
        ({"around": ""}, 400, "'around' is required: the transcript position to read around."),
    ],
)
def test_context_parameters_at_their_limits(api, params, status, problem):
    response = api("/api/v1/conversations/conv-1/messages", **params)
    assert response.status_code == status, response.content[:300]
    if problem:
        assert problem in response.json()["error"]
