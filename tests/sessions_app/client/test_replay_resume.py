"""A real Agent resumes from a live Sessiondesk: READY history continues the conversation; an interrupted tool
call and client-supplied history are refused with the audit's guidance."""

import httpx
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness.step_persistence import StepPersistence

from sessions_app.audit.vocabulary import Verdict as v
from sessions_app.audit.vocabulary import guidance_for
from sessions_app.client.replay import NotReadyForReplay, ReplayRequestError, SessiondeskReplayClient
from sessions_app.client.step_store import SessiondeskStepStore
from sessions_app.models import Conversation, Run
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_agent

pytestmark = pytest.mark.django_db(transaction=True)


def _receipt(base_url: str, key: str, run_id: str) -> None:
    response = httpx.post(
        f"{base_url}/api/v1/receipts",
        json={"run_id": run_id, "effect": "weather-read", "evidence": "outcome", "checked_by": "weather-check"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201, response.text


def test_a_ready_history_resumes_a_real_agent_and_the_conversation_continues(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    store = SessiondeskStepStore(live_server.url, key, principal="user:dana")
    agent = weather_agent()
    first = agent.run_sync(
        "Weather in Zürich?", conversation_id="resume-1", capabilities=[StepPersistence(store=store, agent_name="w")]
    )
    run = Run.objects.get(tenant=tenant, conversation__external_id="resume-1")
    _receipt(live_server.url, key, run.run_id)

    replay = SessiondeskReplayClient(live_server.url, key)
    history = replay.load_history_for_replay("resume-1", principal="user:dana")
    assert history == first.all_messages()

    second = agent.run_sync(
        "And tomorrow?", message_history=history, capabilities=[StepPersistence(store=store, agent_name="w")]
    )
    messages = second.all_messages()
    assert messages[: len(history)] == history and len(messages) > len(history)
    assert second.output.startswith("The weather is sunny")
    conversation = Conversation.objects.get(tenant=tenant, external_id="resume-1")
    assert conversation.runs.count() == 2 and conversation.message_count == len(messages)

    # Another principal may not resume dana's conversation.
    with pytest.raises(NotReadyForReplay) as other:
        replay.load_history_for_replay("resume-1", principal="user:mallory")
    assert other.value.verdict == v.SCOPE_DRIFT


def _crashing_card_agent(store: SessiondeskStepStore) -> Agent:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("charge_card", {"amount_cents": 1200}, tool_call_id="call-card-9")])

    agent = Agent(
        FunctionModel(model),
        system_prompt="You charge cards.",
        capabilities=[StepPersistence(store=store, agent_name="billing")],
    )

    @agent.tool_plain
    def charge_card(amount_cents: int) -> str:
        raise ConnectionError("payment gateway connection dropped")

    return agent


def test_an_interrupted_tool_call_is_refused_with_its_guidance(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    store = SessiondeskStepStore(live_server.url, key)
    with pytest.raises(ConnectionError):
        _crashing_card_agent(store).run_sync("Charge the card on file", conversation_id="resume-2")

    with pytest.raises(NotReadyForReplay) as refused:
        SessiondeskReplayClient(live_server.url, key).load_history_for_replay("resume-2")
    assert refused.value.verdict == v.INTERRUPTED_TOOL
    assert guidance_for(v.INTERRUPTED_TOOL) in refused.value.guidance
    assert "not a retry order" in str(refused.value)


def test_client_supplied_history_is_refused_as_untrusted(live_server, tenant):
    _, key = create_api_key(tenant, "client")
    store = SessiondeskStepStore(live_server.url, key)
    weather_agent().run_sync("Weather?", conversation_id="resume-3", capabilities=[StepPersistence(store=store)])

    replay = SessiondeskReplayClient(live_server.url, key)
    with pytest.raises(NotReadyForReplay) as refused:
        replay.load_history_for_replay("resume-3")
    assert refused.value.verdict == v.UNTRUSTED_HISTORY
    assert refused.value.findings[0]["guidance"] == guidance_for(v.UNTRUSTED_HISTORY)
    assert "server-side source" in str(refused.value)
    with pytest.raises(ReplayRequestError) as missing:
        replay.load_history_for_replay("resume-nowhere")
    assert missing.value.status_code == 404
