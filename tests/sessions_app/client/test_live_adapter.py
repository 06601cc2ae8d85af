"""A real agent with StepPersistence(store=SessiondeskStepStore) lands in Sessiondesk as it runs."""

import pytest
from pydantic_ai_harness.step_persistence import StepPersistence

from sessions_app.client.step_store import SessiondeskError, SessiondeskStepStore
from sessions_app.models import Conversation, Run, Snapshot, ToolEffect
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_agent

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_agent_run_lands_snapshot_by_snapshot_with_its_tool_ledger(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    store = SessiondeskStepStore(live_server.url, key)
    agent = weather_agent()
    result = agent.run_sync(
        "Weather in Zürich?", conversation_id="live-1", capabilities=[StepPersistence(store=store, agent_name="w")]
    )
    conversation = Conversation.objects.get(tenant=tenant, external_id="live-1")
    run = Run.objects.get(conversation=conversation)
    assert run.agent_name == "w" and run.state == "complete" and run.finished_at is not None
    assert Snapshot.objects.filter(run=run).count() >= 2
    assert conversation.message_count == len(result.all_messages())
    effect = ToolEffect.objects.get(run=run)
    assert (effect.tool_name, effect.status) == ("get_weather", "completed")


def test_a_follow_up_run_threads_into_the_same_conversation_without_doubling(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    store = SessiondeskStepStore(live_server.url, key)
    agent = weather_agent()
    first = agent.run_sync("Weather?", conversation_id="live-2", capabilities=[StepPersistence(store=store)])
    second = agent.run_sync(
        "And tomorrow?", message_history=first.all_messages(), capabilities=[StepPersistence(store=store)]
    )
    conversation = Conversation.objects.get(tenant=tenant, external_id="live-2")
    assert conversation.runs.count() == 2
    assert conversation.message_count == len(second.all_messages())


def test_a_revoked_key_fails_the_write_loudly(live_server, tenant):
    store = SessiondeskStepStore(live_server.url, "sdk_s_wrong")
    with pytest.raises(SessiondeskError, match="401 Invalid or revoked API key"):
        weather_agent().run_sync("Weather?", conversation_id="x", capabilities=[StepPersistence(store=store)])
    assert Snapshot.objects.count() == 0
