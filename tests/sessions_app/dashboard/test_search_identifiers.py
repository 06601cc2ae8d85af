"""The search page: a tool-call id lists its call and result first, filters in the query narrow the hits, and the
page's help documents the syntax."""

import re

import pytest

from sessions_app.models import ToolEffect
from tests.agents import weather_messages
from tests.search_app.factories import add_messages, make_conversation, make_run


@pytest.fixture
def weather(world):
    run = make_run(make_conversation(world.acme, "conv-weather"), "run-weather", agent_name="weather")
    add_messages(run, weather_messages())
    ToolEffect.objects.create(
        tenant=world.acme, run=run, tool_call_id="call-weather-1", tool_name="get_weather", status="ok"
    )


def test_a_tool_call_id_is_found_by_id_first(world, as_role, weather):
    page = as_role("support").get("/search/?q=call-weather-1").content.decode()
    block = page[page.index('id="identified"') :]
    assert re.search(r'href="/c/conv-weather/\?at=1#m-1">#1 · tool_call</a>', block)
    assert re.search(r'href="/c/conv-weather/\?at=2#m-2">#2 · tool_result</a>', block)
    assert "Nothing found:" not in page


def test_a_pasted_run_id_still_opens_the_run(world, as_role, weather):
    response = as_role("support").get("/search/?q=run-weather")
    assert response.status_code == 302 and response["Location"] == "/r/run-weather/"


def test_filters_in_the_query_narrow_the_hits(world, as_role, weather):
    client = as_role("support")
    everything = client.get("/search/?q=weather").content.decode()
    only_results = client.get("/search/?q=sunny+zurich+tool:get_weather+role:tool_result").content.decode()
    assert "· user ·" in everything
    assert "· tool_result ·" in only_results and "· user ·" not in only_results
    refused = client.get("/search/?q=weather+role:boss")
    assert refused.status_code == 400 and "Unknown role" in refused.content.decode()


def test_the_help_documents_the_syntax(world, as_role):
    page = as_role("support").get("/search/").content.decode()
    help_text = page[page.index('id="search-help"') :]
    for syntax in ("conversation:ID", "run:ID", "agent:NAME", "tool:NAME", "role:user", "deplo*", "-staging"):
        assert syntax in help_text


def test_a_tool_call_id_typed_whole_is_found_while_typing(world, as_role, weather):
    typed = as_role("support").get("/search/?q=call-weather-1", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="identified"' in typed and "#1 · tool_call" in typed
