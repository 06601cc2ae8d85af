"""A query that is exactly a conversation id, run id or tool-call id finds that conversation, run or tool call first
(`identified`, before the ranked results), within the caller's scope and tenant only."""

import pytest

from search_app.service import run_search
from sessions_app.models import ToolEffect
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(tenant, other_tenant):
    conversation = make_conversation(tenant, "deploy-2026-01-07")
    ops = make_run(conversation, "run-ops-41", agent_name="ops")
    add_messages(ops, weather_messages())  # the real agent's tool call id is "call-weather-1"
    ToolEffect.objects.create(
        tenant=tenant, run=ops, tool_call_id="call-weather-1", tool_name="get_weather", status="ok"
    )
    other = make_run(make_conversation(tenant, "notes"), "run-notes", agent_name="writer")
    add_messages(other, ["see deploy-2026-01-07 and run-ops-41 for details", "run ops 41 was slow"])
    theirs = make_run(make_conversation(other_tenant, "globex-conv"), "globex-run")
    add_messages(theirs, weather_messages())
    ToolEffect.objects.create(
        tenant=other_tenant, run=theirs, tool_call_id="call-weather-1", tool_name="get_weather", status="ok"
    )


def kinds(response):
    return [(item.kind, item.conversation_id, item.run_id, item.position) for item in response.identified]


def test_a_conversation_id_finds_the_conversation_first(tenant, data):
    response = run_search(tenant=tenant, query="deploy-2026-01-07", scope="tenant")
    assert kinds(response) == [("conversation", "deploy-2026-01-07", "", None)]
    assert [hit.conversation_id for hit in response.results] == ["notes"]  # the text mentioning it follows


def test_a_run_id_finds_the_run_first(tenant, data):
    response = run_search(tenant=tenant, query="  run-ops-41 ", scope="tenant")
    assert kinds(response) == [("run", "deploy-2026-01-07", "run-ops-41", None)]


def test_a_tool_call_id_finds_its_call_and_result(tenant, data):
    response = run_search(tenant=tenant, query="call-weather-1", scope="tenant")
    assert kinds(response) == [
        ("tool_call", "deploy-2026-01-07", "run-ops-41", 1),
        ("tool_call", "deploy-2026-01-07", "run-ops-41", 2),
    ]
    assert [item.role for item in response.identified] == ["tool_call", "tool_result"]


def test_in_one_conversation_only_its_own_tool_calls_are_found(tenant, data):
    response = run_search(tenant=tenant, query="call-weather-1", conversation_id="deploy-2026-01-07")
    assert [item.position for item in response.identified] == [1, 2]
    assert run_search(tenant=tenant, query="call-weather-1", conversation_id="notes").identified == []
    assert run_search(tenant=tenant, query="call-weather-1", scope="run", run_id="run-notes").identified == []


def test_another_tenants_ids_are_never_identified(tenant, data):
    assert run_search(tenant=tenant, query="globex-conv", scope="tenant").identified == []
    assert run_search(tenant=tenant, query="globex-run", scope="tenant").identified == []
    assert all(
        item.tenant == "acme" for item in run_search(tenant=tenant, query="call-weather-1", scope="tenant").identified
    )


def test_a_part_of_an_id_is_not_the_id(tenant, data):
    assert run_search(tenant=tenant, query="run-ops", scope="tenant").identified == []
    assert run_search(tenant=tenant, query='call-weather-1"', scope="tenant").identified == []


def test_an_id_that_is_no_query_is_still_found(tenant):
    make_run(make_conversation(tenant, "---"), "run:7")
    assert kinds(run_search(tenant=tenant, query="---", scope="tenant")) == [("conversation", "---", "", None)]
    assert kinds(run_search(tenant=tenant, query="run:7", scope="tenant")) == [("run", "---", "run:7", None)]


def test_the_api_answers_identified_before_results(client, tenant, data):
    _, raw_key = create_api_key(tenant, "server")
    body = client.get(
        "/api/v1/search", {"q": "run-ops-41", "scope": "tenant"}, HTTP_AUTHORIZATION=f"Bearer {raw_key}"
    ).json()
    assert list(body)[0] == "identified"
    assert body["identified"] == [
        {
            "kind": "run",
            "tenant": "acme",
            "conversation_id": "deploy-2026-01-07",
            "run_id": "run-ops-41",
            "position": None,
            "role": "",
        }
    ]


@pytest.mark.parametrize(
    ("options", "query", "statements"),
    [
        ({"scope": "tenant"}, "nothing-of-the-kind", 1),
        ({"scope": "tenant"}, "deploy-2026-01-07", 1),
        ({"conversation_id": "deploy-2026-01-07"}, "run-ops-41", 1),
        ({"scope": "run", "run_id": "run-ops-41"}, "call-weather-1", 2),  # the call's messages: a second read
    ],
)
def test_conversations_runs_and_the_ledger_are_looked_up_in_one_statement(
    tenant, data, options, query, statements, django_assert_num_queries
):
    from search_app.identify import identify
    from search_app.scope import find_target

    target = find_target(
        options.get("scope", "conversation"),
        tenant,
        (tenant.id,),
        options.get("conversation_id"),
        options.get("run_id"),
    )
    with django_assert_num_queries(statements):
        found = identify(query, [tenant], target.conversation_pk, target.run_pk)
    assert bool(found) == (query != "nothing-of-the-kind")
