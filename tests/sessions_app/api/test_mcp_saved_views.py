"""An agent lists the conversations of a saved view by its name, through the MCP server and the JSON API alike:
the view's filters narrow the list; a name another tenant saved, or none saved, is a tool error (404 over the API);
a client key sees only what it wrote, view or not."""

from typing import Any

import pytest
from pydantic_ai_harness.step_persistence import StepPersistence

from sessions_app.client.step_store import SessiondeskStepStore
from sessions_app.models import SavedView
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_agent
from tests.factories import make_tenant
from tests.sessions_app.api.test_mcp_server import _api, _json, _sdk

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def acme(live_server: Any, tenant: Any) -> dict[str, str]:
    _, key = create_api_key(tenant, "server")
    for conversation, agent in (("view-zurich", "forecaster"), ("view-other", "chatter")):
        store = SessiondeskStepStore(live_server.url, key, principal="user:dana")
        weather_agent().run_sync(
            "Weather in Zürich?",
            conversation_id=conversation,
            capabilities=[StepPersistence(store=store, agent_name=agent)],
        )
    SavedView.objects.create(tenant=tenant, name="Forecasts", query="agent=forecaster")
    return {"url": f"{live_server.url}/mcp", "api": live_server.url, "key": key}


def test_a_saved_view_narrows_the_list_by_its_name(acme: dict[str, str]) -> None:
    _, (everything, forecasts, unknown) = _sdk(
        acme["url"],
        acme["key"],
        ("list_conversations", {}),
        ("list_conversations", {"view": "forecasts"}),
        ("list_conversations", {"view": "No such view"}),
    )
    assert {row["conversation_id"] for row in _json(everything)["conversations"]} == {"view-zurich", "view-other"}
    assert [row["conversation_id"] for row in _json(forecasts)["conversations"]] == ["view-zurich"]
    assert _json(forecasts) == _api(acme, "/api/v1/conversations?view=Forecasts")
    assert unknown.is_error and "No saved view named 'No such view'" in unknown.content[0].text
    response = _api(acme, "/api/v1/conversations?view=No+such+view")
    assert "No saved view named" in response["error"]


def test_another_tenant_s_view_is_unknown_and_a_client_key_sees_only_its_own(acme: dict[str, str], tenant: Any) -> None:
    globex = make_tenant("globex", "Globex")
    _, globex_key = create_api_key(globex, "server")
    _, (foreign,) = _sdk(acme["url"], globex_key, ("list_conversations", {"view": "Forecasts"}))
    assert foreign.is_error and "No saved view named 'Forecasts'" in foreign.content[0].text
    _, client_key = create_api_key(tenant, "client")
    _, (mine,) = _sdk(acme["url"], client_key, ("list_conversations", {"view": "Forecasts"}))
    assert _json(mine)["conversations"] == []  # the view's conversations were written by another key
