"""The triage list and the conversation page cost a fixed number of queries (issue 26): the list with its columns
(preview, tokens, cost, duration, verdicts worst first) asks the database as often for 60 conversations as for 5,
and a conversation's page as often for 6 runs as for 2. Conversations are written by real pydantic-ai agents and
stored through the product's own ingestion."""

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from sessions_app.dashboard.ids import conversation_url
from sessions_app.demo.plans import ConversationPlan, ToolStep, Turn
from sessions_app.models import Conversation, Run
from tests.factories import make_member, make_tenant
from tests.sessions_app.dashboard.conftest import client_for, deploy_plan, ingest_plan, quiet_plan

PLANS = (deploy_plan, quiet_plan)  # an interrupted call, an orphan, a credential; and a quiet one


def queries_for(client: Client, url: str) -> tuple[int, str]:
    client.get(url)  # warm: the cached agent names, a verdict refreshed once, are not what is compared
    with CaptureQueriesContext(connection) as captured:
        page = client.get(url)
    assert page.status_code == 200
    return len(captured), page.content.decode()


def add_conversations(tenant, start: int, stop: int) -> None:
    for i in range(start, stop):
        ingest_plan(tenant, PLANS[i % len(PLANS)](), f"conv-{i:03d}")


def test_the_list_asks_as_often_for_sixty_conversations_as_for_five(db):
    tenant = make_tenant("acme", "Acme")
    client = client_for(make_member(tenant, "admin", "ada"))
    add_conversations(tenant, 0, 5)
    few, few_page = queries_for(client, "/conversations/")
    add_conversations(tenant, 5, 60)
    many, many_page = queries_for(client, "/conversations/")
    assert few_page.count('data-col="cost"') == 5 and many_page.count('data-col="cost"') == 50  # a page
    assert "Roll out checkout_v3_enabled" in many_page and "Weather in Krak" in many_page  # previews shown
    assert "Interrupted Tool" in many_page or "INTERRUPTED TOOL" in many_page  # verdicts shown
    assert many == few, f"{few} queries for 5 conversations, {many} for 60"


def runs_plan(turns: int) -> ConversationPlan:
    """A conversation of `turns` runs (one per user turn), each calling a tool."""
    return ConversationPlan(
        name=f"runs-{turns}",
        agent_name="weather_agent",
        turns=tuple(
            Turn(f"Weather in city {i}?", (ToolStep("get_weather", f"city {i}", "sunny"),), answer="Sunny.")
            for i in range(turns)
        ),
    )


def test_the_conversation_page_asks_as_often_for_six_runs_as_for_two(db):
    tenant = make_tenant("acme", "Acme")
    client = client_for(make_member(tenant, "admin", "ada"))
    two = ingest_plan(tenant, runs_plan(2), "conv-two")
    six = ingest_plan(tenant, runs_plan(6), "conv-six")
    assert [Run.objects.filter(conversation=c).count() for c in (two, six)] == [2, 6]
    few, _ = queries_for(client, conversation_url(two.external_id))
    many, page = queries_for(client, conversation_url(six.external_id))
    assert "Weather in city 5?" in page
    assert many == few, f"{few} queries for 2 runs, {many} for 6"
    assert Conversation.objects.count() == 2
