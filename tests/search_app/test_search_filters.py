"""Filters in the query (`conversation:`, `run:`, `agent:`, `tool:`, `role:`) narrow the search and its counts; a
filter that disagrees with the request is refused; over HTTP no query, however hostile, answers 500."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search_app.errors import SearchError
from search_app.service import run_search
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.search_app.factories import add_messages, make_conversation, make_run, tool_call, tool_result

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ranking")]


@pytest.fixture
def data(tenant, other_tenant):
    ops = make_run(make_conversation(tenant, "c-ops"), "r-ops", agent_name="ops")
    add_messages(ops, weather_messages("What is the weather in Zürich?"))
    writer = make_run(make_conversation(tenant, "c-writer"), "r-writer", agent_name="writer")
    add_messages(
        writer,
        [
            "write about the weather",
            tool_call("getXweather", {"city": "Zürich"}, "call-x"),
            tool_result("getXweather", "weather: rain in Zürich", "call-x"),
        ],
    )
    add_messages(make_run(make_conversation(other_tenant, "c-theirs"), "r-theirs"), ["weather of globex"])


def hits(tenant, query, **options):
    response = run_search(tenant=tenant, query=query, scope=options.pop("scope", "tenant"), limit=25, **options)
    assert response.total_matches == len(response.results)
    return {(hit.conversation_id, hit.run_id, hit.role) for hit in response.results}, response


def test_tool_matches_the_exact_tool_name(tenant, data):
    found, _ = hits(tenant, "zurich tool:get_weather")
    assert found == {("c-ops", "r-ops", "tool_call"), ("c-ops", "r-ops", "tool_result")}  # "sunny in Zürich"
    found, _ = hits(tenant, "sunny tool:get_weather")
    assert found == {("c-ops", "r-ops", "tool_result")}
    found, _ = hits(tenant, "zurich tool:getXweather")
    assert {conversation for conversation, _, _ in found} == {"c-writer"}
    assert hits(tenant, "zurich tool:get")[0] == set()


def test_role_agent_run_and_conversation_narrow(tenant, data):
    assert hits(tenant, "weather role:user")[0] == {("c-ops", "r-ops", "user"), ("c-writer", "r-writer", "user")}
    assert {c for c, _, _ in hits(tenant, "weather agent:writer")[0]} == {"c-writer"}
    assert {r for _, r, _ in hits(tenant, "weather run:r-ops")[0]} == {"r-ops"}
    found, response = hits(tenant, "weather conversation:c-writer")
    assert {c for c, _, _ in found} == {"c-writer"} and response.total_conversations == 1
    both, _ = hits(tenant, "weather role:user role:tool_result")
    assert {role for _, _, role in both} == {"user", "tool_result"}


def test_another_tenants_ids_answer_like_missing_ones(tenant, data):
    theirs = run_search(tenant=tenant, query="weather conversation:c-theirs", scope="tenant")
    missing = run_search(tenant=tenant, query="weather conversation:c-nowhere", scope="tenant")
    assert theirs.results == missing.results == []
    assert theirs.message.replace("c-theirs", "?") == missing.message.replace("c-nowhere", "?")
    assert run_search(tenant=tenant, query="weather run:r-theirs", scope="tenant").results == []


def test_a_filter_cannot_leave_the_conversation_searched(tenant, data):
    with pytest.raises(SearchError, match="differs from the conversation searched"):
        run_search(tenant=tenant, query="weather conversation:c-writer", conversation_id="c-ops")
    found, _ = hits(tenant, "weather conversation:c-ops", scope="conversation", conversation_id="c-ops")
    assert {c for c, _, _ in found} == {"c-ops"}


def test_disagreeing_or_unknown_values_are_refused(tenant, data):
    with pytest.raises(SearchError, match="Unknown role 'boss'"):
        run_search(tenant=tenant, query="weather role:boss", scope="tenant")
    with pytest.raises(SearchError, match="have none in common"):
        run_search(tenant=tenant, query="weather role:user", scope="tenant", roles=["assistant"])
    with pytest.raises(SearchError, match="differs from the agent searched"):
        run_search(tenant=tenant, query="weather agent:ops", scope="tenant", agent="writer")


QUERY_PIECES = st.sampled_from(
    [
        "weather",
        "conversation:",
        "run:",
        "agent:",
        "tool:",
        "role:",
        "role:user",
        '"',
        "-",
        "*",
        "c-ops",
        "r-ops",
        "call-weather-1",
        "%",
        "_",
        "\\",
        "'",
        ";",
        "数据",
        " ",
        'run:"',
        "tool:%_",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.lists(st.one_of(QUERY_PIECES, st.text(max_size=8)), min_size=1, max_size=8).map("".join))
def test_no_query_answers_500(client, tenant, data, query):
    _, raw_key = create_api_key(tenant, "server")
    response = client.get("/api/v1/search", {"q": query, "scope": "tenant"}, HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    assert response.status_code in (200, 400), (query, response.content[:300])
    if response.status_code == 400:
        assert response.json()["error"]
