"""The MCP server at /mcp: the official SDK's client and a real pydantic-ai agent (FunctionModel choosing the
tool, the MCP toolset over streamable HTTP) against a live server, answering what the JSON API answers; another
tenant's key sees nothing of acme, a client key only what a client key may, and a missing key is a 401."""

import asyncio
import json
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness.step_persistence import StepPersistence

from sessions_app.client.step_store import SessiondeskStepStore
from sessions_app.models import AuditEvent, Run
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_agent
from tests.factories import make_tenant

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {
    "search_sessions",
    "read_conversation_context",
    "list_conversations",
    "get_conversation",
    "get_run",
    "run_verdict",
    "replay_readiness",
}


@pytest.fixture
def acme(live_server: Any, tenant: Any) -> dict[str, str]:
    _, key = create_api_key(tenant, "server")
    store = SessiondeskStepStore(live_server.url, key, principal="user:dana")
    weather_agent().run_sync(
        "Weather in Zürich?", conversation_id="mcp-weather", capabilities=[StepPersistence(store=store, agent_name="w")]
    )
    run = Run.objects.get(tenant=tenant, conversation__external_id="mcp-weather")
    return {"url": f"{live_server.url}/mcp", "api": live_server.url, "key": key, "run_id": run.run_id}


async def _calls(url: str, key: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        return tools, [await session.call_tool(name, arguments) for name, arguments in calls]


def _sdk(url: str, key: str, *calls: tuple[str, dict[str, Any]]) -> tuple[set[str], list[Any]]:
    return asyncio.run(_calls(url, key, list(calls)))


def _json(result: Any) -> Any:
    """A tool's answer as the model reads it: the text content, the API's JSON."""
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _api(acme: dict[str, str], path: str, key: str | None = None) -> Any:
    response = httpx.get(f"{acme['api']}{path}", headers={"Authorization": f"Bearer {key or acme['key']}"})
    return response.json()


def test_the_sdk_client_lists_the_tools_and_gets_the_api_s_answers(acme: dict[str, str]) -> None:
    tools, (search, context, listing, verdict, ready) = _sdk(
        acme["url"],
        acme["key"],
        ("search_sessions", {"q": "sunny", "scope": "tenant"}),
        ("read_conversation_context", {"conversation_id": "mcp-weather", "around": 2, "before": 1, "after": 1}),
        ("list_conversations", {}),
        ("run_verdict", {"run_id": acme["run_id"]}),
        ("replay_readiness", {"conversation_id": "mcp-weather", "principal": "user:dana"}),
    )
    assert tools == TOOLS
    assert _json(search) == _api(acme, "/api/v1/search?q=sunny&scope=tenant")
    assert _json(search)["results"][0]["conversation_id"] == "mcp-weather"
    assert _json(context) == _api(acme, "/api/v1/conversations/mcp-weather/messages?around=2&before=1&after=1")
    assert _json(listing) == _api(acme, "/api/v1/conversations")
    (row,) = _json(listing)["conversations"]
    assert (row["conversation_id"], row["runs"], row["turns"], row["tool_calls"]) == ("mcp-weather", 1, 1, 1)
    verdict_answer = _json(verdict)
    assert verdict_answer["run_id"] == acme["run_id"] and verdict_answer["verdict"] == "MISSING OUTCOME RECEIPT"
    assert all(finding["guidance"] for finding in verdict_answer["findings"])
    assert _json(ready)["ready"] is False and _json(ready)["findings"]
    # Asking for readiness is recorded like a replay request.
    assert AuditEvent.objects.filter(conversation_id="mcp-weather", event_class="replay_refused").exists()


def test_refused_input_is_a_tool_error_naming_the_problem(acme: dict[str, str]) -> None:
    _, (bad_limit, missing, bad_cursor) = _sdk(
        acme["url"],
        acme["key"],
        ("search_sessions", {"q": "sunny", "scope": "tenant", "limit": 999}),
        ("get_conversation", {"conversation_id": "no-such"}),
        ("list_conversations", {"cursor": "not-a-cursor"}),
    )
    assert bad_limit.is_error and "'limit' must be a whole number from 1 to 25, got 999." in bad_limit.content[0].text
    assert missing.is_error and "No conversation 'no-such'." in missing.content[0].text
    assert bad_cursor.is_error and "not valid" in bad_cursor.content[0].text


def test_another_tenant_s_key_sees_nothing_of_acme(acme: dict[str, str]) -> None:
    _, globex_key = create_api_key(make_tenant("globex", "Globex"), "server")
    _, (search, listing, conversation, verdict, ready) = _sdk(
        acme["url"],
        globex_key,
        ("search_sessions", {"q": "sunny", "scope": "tenant"}),
        ("list_conversations", {}),
        ("get_conversation", {"conversation_id": "mcp-weather"}),
        ("run_verdict", {"run_id": acme["run_id"]}),
        ("replay_readiness", {"conversation_id": "mcp-weather"}),
    )
    assert _json(search)["results"] == [] and _json(listing)["conversations"] == []
    for missing in (conversation, verdict, ready):
        assert missing.is_error and "sunny" not in missing.content[0].text
    assert conversation.content[0].text.endswith(_api(acme, "/api/v1/conversations/mcp-weather", globex_key)["error"])


def test_a_client_key_may_not_ask_about_history_it_did_not_write(acme: dict[str, str], tenant: Any) -> None:
    _, client_key = create_api_key(tenant, "client")
    _, (ready, search) = _sdk(
        acme["url"],
        client_key,
        ("replay_readiness", {"conversation_id": "mcp-weather", "principal": "user:dana"}),
        ("search_sessions", {"q": "sunny", "scope": "tenant"}),
    )
    api_error = _api(acme, "/api/v1/conversations/mcp-weather/replay?principal=user:dana", client_key)["error"]
    assert ready.is_error and ready.content[0].text.endswith(api_error)
    # A client key searches only conversations it wrote: a tenant-wide search is refused, as by the API (403).
    search_error = _api(acme, "/api/v1/search?q=sunny&scope=tenant", client_key)["error"]
    assert search.is_error and search.content[0].text.endswith(search_error)


def test_a_missing_or_unknown_key_is_refused_before_the_protocol(acme: dict[str, str]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert httpx.post(acme["url"], json=body).status_code == 401
    assert httpx.post(acme["url"], json=body, headers={"Authorization": "Bearer sd_nope"}).status_code == 401


def _chooser(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
    if returns:
        hits = returns[-1].content["results"]
        return ModelResponse(parts=[TextPart(f"Found in {hits[0]['conversation_id']}: {hits[0]['snippet']}")])
    assert {tool.name for tool in info.function_tools} >= TOOLS
    return ModelResponse(parts=[ToolCallPart("search_sessions", {"q": "sunny", "scope": "tenant"})])


def test_a_real_agent_uses_the_server_as_its_toolset(acme: dict[str, str]) -> None:
    toolset = MCPToolset(acme["url"], headers={"Authorization": f"Bearer {acme['key']}"})
    agent = Agent(FunctionModel(_chooser), toolsets=[toolset])
    result = agent.run_sync("Where did the agent say it was sunny?")
    assert result.output.startswith("Found in mcp-weather:") and "sunny" in result.output
    call = next(p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart))
    assert json.loads(json.dumps(call.content)) == _api(acme, "/api/v1/search?q=sunny&scope=tenant")
