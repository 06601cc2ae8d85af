"""The capability's reason to exist: after compaction drops a fact from the live context, the agent gets it back.

A real harness scenario (sessions_app.demo.scenarios: a real Agent, FunctionModel, StepPersistence and
SlidingWindowCompaction) lands in Sessiondesk through the lead's ingestion; then a second run, continuing from
the compacted history, is a real Agent with SessiondeskSearch whose model calls the search tool and answers
from what it returns. Its own search traffic, ingested afterwards, is not indexed.
"""

import asyncio

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness.compaction import SlidingWindowCompaction
from pydantic_ai_harness.step_persistence import InMemoryStepStore, StepPersistence

from model_messages.rendering import message_text
from search_app.agent_tools import InProcessSearchClient
from search_app.service import run_search
from sessions_app.client.search import SessiondeskSearch
from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from tests.scenarios import run_scenario

pytestmark = pytest.mark.django_db(transaction=True)

FACT = "invoice record 1: status ok, value 37"  # the first tool result of the "sliding_window" scenario


def ingest(tenant, store: InMemoryStepStore, conversation_id: str) -> None:
    payloads = [parse_snapshot(p) for p in store_as_payloads(store, conversation_id)]
    ingest_snapshots(tenant, payloads, source="server", via="api")


def visible_text(messages: list[ModelMessage]) -> str:
    return "\n".join(message_text(message) for message in messages)


def test_an_agent_recovers_a_fact_that_compaction_dropped(tenant):
    first_store = InMemoryStepStore()
    result = run_scenario("sliding_window", first_store, conversation_id="conv-agent")
    ingest(tenant, first_store, "conv-agent")
    compacted = asyncio.run(first_store.latest_snapshot(run_id=result.run_ids[-1])).messages
    assert FACT not in visible_text(compacted), "the scenario's compaction should have dropped the fact"

    seen_before_search: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
        searches = [p for p in returns if p.tool_name == "search_conversation_history"]
        if not searches:
            seen_before_search.append(visible_text(messages))
            return ModelResponse(
                parts=[ToolCallPart("search_conversation_history", {"query": '"invoice record 1"'}, tool_call_id="s1")]
            )
        return ModelResponse(parts=[TextPart(f"From the history: {searches[-1].content}")])

    second_store = InMemoryStepStore()
    agent = Agent(
        FunctionModel(respond),
        capabilities=[
            SlidingWindowCompaction(max_messages=4, keep_messages=2),
            StepPersistence(store=second_store, run_id="conv-agent-run-2", agent_name="support_agent"),
            SessiondeskSearch(InProcessSearchClient(tenant)),
        ],
    )
    answer = agent.run_sync(
        "What was the value on invoice record 1?", message_history=compacted, conversation_id="conv-agent"
    ).output

    assert FACT not in seen_before_search[0]
    assert FACT in answer
    assert "| run: conv-agent-run-1 | conversation: conv-agent |" in answer
    assert "tool_result]\n(dropped from your live context by compaction" in answer

    # The second run lands too; its search call and result are in the transcript but never in the index.
    ingest(tenant, second_store, "conv-agent")
    hits = run_search(tenant=tenant, query='"invoice record 1"', conversation_id="conv-agent", limit=25).results
    by_run = sorted((hit.run_id, hit.role) for hit in hits)
    # The fact itself, the question asking for it and the answer quoting it; not the search call or its result.
    assert by_run == [
        ("conv-agent-run-1", "tool_result"),
        ("conv-agent-run-2", "assistant"),
        ("conv-agent-run-2", "user"),
    ]
