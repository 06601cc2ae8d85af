"""A hostile saved-view name (unicode, very long, SQL-ish, null bytes) on GET /api/v1/conversations and on the
MCP tool list_conversations is a clear 400 or 404 (a tool error over MCP), never a server error."""

from typing import Any

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_app.models import SavedView
from sessions_app.tenancy.api_keys import create_api_key
from tests.sessions_app.api.test_mcp_server import _sdk

HOSTILE = [
    "' OR 1=1 --",
    "Forecasts'; DROP TABLE sessions_app_savedview; --",
    "nul\x00byte",
    "\x00",
    "Zürich 東京 🚀",
    "x" * 5000,
    "%00%27",
    "   ",
    "\u202eweiv",
]


def _views() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(min_size=1, max_size=200),
        st.text(min_size=81, max_size=3000),
        st.sampled_from(HOSTILE),
        st.builds(lambda a, b: f"{a}\x00{b}", st.text(max_size=20), st.text(max_size=20)),
    )


@pytest.mark.django_db
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(view=_views())
def test_the_api_answers_a_hostile_view_with_a_clear_error(tenant: Any, view: str) -> None:
    _, key = create_api_key(tenant, "server")
    SavedView.objects.get_or_create(tenant=tenant, name="Forecasts", query="agent=forecaster")
    response = Client().get("/api/v1/conversations", {"view": view}, HTTP_AUTHORIZATION=f"Bearer {key}")
    if view.strip().lower() == "forecasts":
        assert response.status_code == 200
        return
    assert response.status_code in (400, 404), (view[:80], response.status_code, response.content[:300])
    assert response.json()["error"]


@pytest.mark.django_db(transaction=True)
def test_the_mcp_tool_answers_a_hostile_view_with_a_tool_error(live_server: Any, tenant: Any) -> None:
    _, key = create_api_key(tenant, "server")
    _, results = _sdk(f"{live_server.url}/mcp", key, *[("list_conversations", {"view": view}) for view in HOSTILE])
    for view, result in zip(HOSTILE, results, strict=True):
        assert result.is_error, view[:80]
        text = result.content[0].text
        assert "saved view" in text.lower() or "view" in text.lower(), (view[:80], text[:300])
        assert "internal" not in text.lower() and "traceback" not in text.lower(), text[:300]
