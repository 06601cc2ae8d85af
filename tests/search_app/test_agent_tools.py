"""The agent capability: a real pydantic-ai Agent (FunctionModel) calls the tools in process and over HTTP."""

import threading

import httpx
import pytest
from django.db import connections
from django.test import Client
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from search_app.agent_tools import InProcessSearchClient
from sessions_app.client.search import HttpSearchClient, SessiondeskSearch
from sessions_app.tenancy.api_keys import create_api_key
from tests.search_app.factories import make_conversation_with

# The tools are sync, so pydantic-ai runs them in worker threads: they need committed data.
pytestmark = pytest.mark.django_db(transaction=True)


def scripted(*calls: tuple[str, dict]):
    """A model that makes the given tool calls in turn, then answers with every tool result it saw."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen = [p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        if len(seen) < len(calls):
            name, args = calls[len(seen)]
            return ModelResponse(parts=[ToolCallPart(tool_name=name, args=args, tool_call_id=f"c{len(seen)}")])
        return ModelResponse(parts=[TextPart(content="\n=====\n".join(seen))])

    return FunctionModel(respond)


def django_transport(request: httpx.Request) -> httpx.Response:
    """Route httpx requests into Django's test client: the real URLconf, auth and views, without a socket."""
    response = Client().get(
        request.url.path, dict(request.url.params), HTTP_AUTHORIZATION=request.headers["Authorization"]
    )
    if threading.current_thread() is not threading.main_thread():
        connections.close_all()
    return httpx.Response(
        response.status_code, headers={"content-type": response["Content-Type"]}, content=response.content
    )


@pytest.fixture
def history(tenant, other_tenant):
    make_conversation_with(
        tenant,
        ["Our ticket is QUOKKA-5521 and the flag is checkout_v3_enabled", "ok", "later message"],
        external_id="conv-1",
        run_id="run-1",
    )
    make_conversation_with(tenant, ["QUOKKA-5521 in another conversation"], external_id="conv-2", run_id="run-2")
    make_conversation_with(other_tenant, ["QUOKKA-5521 at globex"], external_id="conv-x", run_id="run-x")


@pytest.fixture(params=["in_process", "http"])
def client_for(request, tenant):
    if request.param == "in_process":
        return InProcessSearchClient(tenant)
    _, raw_key = create_api_key(tenant, "server")
    return HttpSearchClient(
        "http://sessiondesk.test", raw_key, client=httpx.Client(transport=httpx.MockTransport(django_transport))
    )


def run_agent(client, *calls, conversation_id="conv-1") -> str:
    agent = Agent(scripted(*calls), capabilities=[SessiondeskSearch(client)])
    return agent.run_sync("what was the ticket?", conversation_id=conversation_id).output


def test_the_agent_finds_a_fact_with_its_run_and_conversation(history, client_for):
    output = run_agent(client_for, ("search_conversation_history", {"query": "QUOKKA-5521"}))
    assert output.startswith("Found 1 match(es) for 'QUOKKA-5521':")
    assert "[score: " in output and "| run: run-1 | conversation: conv-1 | position: 0 | user]" in output
    assert "Our ticket is QUOKKA-5521 and the flag is checkout_v3_enabled" in output
    assert "another conversation" not in output and "globex" not in output


def test_the_agent_opens_a_hit_in_its_context(history, client_for):
    output = run_agent(
        client_for, ("read_conversation_context", {"run_id": "run-1", "position": 1, "before": 1, "after": 1})
    )
    assert output.splitlines() == [
        "Conversation conv-1, around position 1:",
        "[0] user (run run-1): Our ticket is QUOKKA-5521 and the flag is checkout_v3_enabled",
        "[1] user (run run-1): ok",
        "[2] user (run run-1): later message",
    ]


def test_a_run_outside_the_conversation_answers_like_a_missing_run(history, client_for):
    output = run_agent(
        client_for,
        ("search_conversation_history", {"query": "QUOKKA", "run_id": "run-2"}),
        ("search_conversation_history", {"query": "QUOKKA", "run_id": "run-x"}),
        ("search_conversation_history", {"query": "QUOKKA", "run_id": "run-nope"}),
        ("read_conversation_context", {"run_id": "run-x", "position": 0}),
        ("read_conversation_context", {"run_id": "run-nope", "position": 0}),
    )
    assert output.split("\n=====\n") == [
        "No persisted history for run 'run-2'.",
        "No persisted history for run 'run-x'.",
        "No persisted history for run 'run-nope'.",
        "No persisted history for run 'run-x'.",
        "No persisted history for run 'run-nope'.",
    ]


def test_a_bad_query_comes_back_as_a_reason_the_model_can_act_on(history, client_for):
    output = run_agent(client_for, ("search_conversation_history", {"query": "  "}))
    assert output == "The search was not run: The query is empty: give at least one word to search for."


def test_a_conversation_with_no_history_says_so(history, client_for):
    output = run_agent(client_for, ("search_conversation_history", {"query": "QUOKKA"}), conversation_id="fresh")
    assert output == "No persisted history for conversation 'fresh'."


def test_without_a_conversation_id_the_tool_searches_nothing(history, tenant):
    capability = SessiondeskSearch(InProcessSearchClient(tenant))
    toolset = capability.get_toolset()

    class NoConversation:
        conversation_id = None

    answer = toolset.search_conversation_history(NoConversation(), "QUOKKA")
    assert "needs a conversation id" in answer


def test_the_capability_tells_the_model_the_tool_exists(tenant):
    assert "search_conversation_history" in SessiondeskSearch(InProcessSearchClient(tenant)).get_instructions()
    assert SessiondeskSearch(InProcessSearchClient(tenant), add_instructions=False).get_instructions() is None
    with pytest.raises(ValueError, match="max_matches"):
        SessiondeskSearch(InProcessSearchClient(tenant), max_matches=40)
