"""The triage list (issue 26): each row's first prompt (masked), last activity, runs, turns, tool calls, tokens,
cost and duration from the columns kept at ingest, the worst verdict first with its own colour, sorts and ranges
as URL parameters, and overview drill-downs that land on as many conversations as the overview counted."""

import re
from datetime import timedelta

import pytest

from sessions_app.dashboard.overview import tenant_overview
from sessions_app.models import Conversation, Run

pytestmark = pytest.mark.django_db


def _listed(response) -> list[str]:
    return re.findall(r'data-primary href="/c/[^"]+/">([^<]+)</a>', response.content.decode())


def _row(page: str, conversation_id: str) -> str:
    start = page.index(f">{conversation_id}</a>")
    return page[start : page.index("</tr>", start)]


def test_a_row_shows_the_first_prompt_masked_and_the_kept_columns(world, as_role):
    deploy = Conversation.objects.get(pk=world.deploy.pk)
    assert deploy.first_user_text and deploy.model_step_count > 0
    page = as_role("support").get("/conversations/").content.decode()
    row = _row(page, "conv-deploy")
    assert "data-preview" in row
    assert f'data-col="turns">{deploy.turn_count}<' in row
    assert f'data-col="tool-calls">{deploy.tool_call_count}<' in row
    assert f'data-col="tokens">{deploy.total_tokens:,}<' in row
    assert 'data-col="cost">no price<' in row  # the fixture's function model has no price: never "$0"
    assert 'data-col="duration">' in row


def test_a_tenant_price_gives_a_cost_and_the_preview_is_masked(world, as_role):
    conversation = Conversation.objects.get(pk=world.deploy.pk)
    Conversation.objects.filter(pk=conversation.pk).update(
        first_user_text="Use the key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 to deploy", cost_micro_usd=12_345,
        unpriced_steps=0,
    )
    row = _row(as_role("support").get("/conversations/").content.decode(), "conv-deploy")
    assert "abcdefghijklmnopqrstuvwxyz0123456789" not in row
    assert 'data-col="cost">$0.0123<' in row


def test_the_worst_verdict_comes_first_with_a_colour_of_its_own(world, as_role):
    row = _row(as_role("support").get("/conversations/").content.decode(), "conv-deploy")
    verdicts = re.findall(r'data-verdict="([^"]+)"', row)
    assert verdicts[0] == Conversation.objects.get(pk=world.deploy.pk).worst_verdict == "INTERRUPTED TOOL"
    assert 'class="badge verdict bad v-interrupted-tool"' in row


@pytest.mark.parametrize("sort", ["worst", "turns", "tool_calls", "tokens", "cost", "duration", "recent", "oldest"])
def test_every_sort_answers_and_walks_by_its_column(world, as_role, sort):
    response = as_role("support").get(f"/conversations/?sort={sort}")
    assert response.status_code == 200
    assert sorted(_listed(response)) == ["conv-deploy", "conv-quiet"]


def test_a_numeric_range_narrows_the_list(world, as_role):
    deploy = Conversation.objects.get(pk=world.deploy.pk)
    quiet = Conversation.objects.get(pk=world.quiet.pk)
    assert deploy.tool_call_count > quiet.tool_call_count
    client = as_role("support")
    low = quiet.tool_call_count + 1
    assert _listed(client.get(f"/conversations/?tool_calls_min={low}")) == ["conv-deploy"]
    assert _listed(client.get(f"/conversations/?tool_calls_max={low - 1}")) == ["conv-quiet"]
    assert _listed(client.get(f"/conversations/?tokens_min={deploy.total_tokens + 1}")) == []
    seconds = deploy.duration_ms / 1000
    assert "conv-deploy" in _listed(client.get(f"/conversations/?duration_min={seconds - 0.5}"))


@pytest.mark.parametrize(
    ("query", "named"),
    [("turns_min=-1", b"Turns from"), ("cost_max=lots", b"Cost"), ("tokens_min=5&tokens_max=2", b"Tokens")],
)
def test_a_bad_range_is_a_400_naming_it(world, as_role, query, named):
    response = as_role("support").get(f"/conversations/?{query}")
    assert response.status_code == 400
    assert named in response.content or b"Ensure" in response.content or b"Enter a" in response.content


def test_every_overview_agent_drill_down_lands_on_as_many_conversations_as_it_counted(world, as_role):
    starts = Run.objects.filter(tenant=world.acme).values_list("started_at", flat=True)
    first, last = min(starts).date(), max(starts).date()
    overview = tenant_overview(world.acme, first, last)
    client = as_role("support")
    assert overview.agents
    for agent in overview.agents:
        url = f"/conversations/?agent={agent.name}&since={first}&until={last}"
        assert len(_listed(client.get(url))) == agent.conversations
    # A run started outside the range is not counted, and its conversation is not listed either.
    Run.objects.filter(conversation=world.quiet).update(started_at=min(starts) - timedelta(days=40))
    narrowed = tenant_overview(world.acme, first, last)
    for agent in narrowed.agents:
        url = f"/conversations/?agent={agent.name}&since={first}&until={last}"
        assert len(_listed(client.get(url))) == agent.conversations
