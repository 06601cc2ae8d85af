"""Times whose UTC instant falls outside the years both Python and PostgreSQL hold (1 to 9999) are refused with a
400 that names the field, on every door that takes a time, and nothing is written; the extremes inside the range
are taken as they are."""

import json
from urllib.parse import quote

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db

OUTSIDE = [
    "9999-12-31T23:59:59-14:00",
    "9999-12-31T12:00:00-23:59",
    "0001-01-01T00:00:00+14:00",
    "0001-01-01T11:00:00+23:59",
]
INSIDE = ["9999-12-31T23:59:59+14:00", "0001-01-01T00:00:00-14:00"]


@pytest.fixture
def key(tenant) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {create_api_key(tenant, 'server')[1]}"}


def _snapshot(client, key, conversation_id: str, started_at: str):
    body = {
        "conversation_id": conversation_id,
        "run_id": f"{conversation_id}-run",
        "started_at": started_at,
        "messages": ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json"),
    }
    return client.post("/api/v1/snapshots", json.dumps(body), content_type="application/json", **key)


@pytest.mark.parametrize("when", OUTSIDE)
def test_a_snapshot_starting_outside_the_range_is_400_and_writes_nothing(client, key, when):
    before = row_counts()
    response = _snapshot(client, key, "c-edge", when)
    assert response.status_code == 400
    assert response.json()["error"].startswith("'started_at' is outside the years 1 to 9999")
    assert row_counts() == before


@pytest.mark.parametrize("when", INSIDE)
def test_the_extremes_inside_the_range_are_taken(client, key, when):
    assert _snapshot(client, key, "c-edge", when).status_code == 201
    assert client.get(f"/api/v1/search?q=weather&scope=tenant&since={quote(when)}", **key).status_code == 200


@pytest.mark.parametrize("when", OUTSIDE)
@pytest.mark.parametrize("bound", ["since", "until"])
def test_a_search_bounded_outside_the_range_is_400(client, key, when, bound):
    response = client.get(f"/api/v1/search?q=weather&scope=tenant&{bound}={quote(when)}", **key)
    assert response.status_code == 400
    assert response.json()["error"].startswith(f"'{bound}' is outside the years 1 to 9999")


@pytest.mark.parametrize("when", OUTSIDE[:2])
def test_a_wait_due_outside_the_range_is_400_and_writes_nothing(client, key, when):
    assert _snapshot(client, key, "c-wait", "2026-01-01T00:00:00Z").status_code == 201
    before = row_counts()
    wait = {"run_id": "c-wait-run", "owner": "ops", "decision": "approve", "deadline": when}
    response = client.post("/api/v1/waits", json.dumps(wait), content_type="application/json", **key)
    assert response.status_code == 400 and "outside the years 1 to 9999" in response.json()["error"]
    assert row_counts() == before


@pytest.mark.parametrize("path", ["/api/v1/audit-events", "/api/v1/conversations", "/api/v1/search"])
def test_an_offset_past_what_postgresql_holds_is_read_as_utc_not_a_500(client, key, path):
    """RFC 3339 and Python take offsets up to ±23:59, PostgreSQL only up to ±15:59 (Schemathesis found the 500)."""
    response = client.get(path, {"until": "0002-03-29T18:52:20+18:14", "scope": "tenant", "q": "weather"}, **key)
    assert response.status_code == 200, response.content


def test_a_snapshot_started_at_an_offset_past_what_postgresql_holds_is_stored(client, key):
    assert _snapshot(client, key, "c-offset", "2026-01-01T00:00:00+18:14").status_code == 201


def test_message_times_at_an_offset_past_what_postgresql_holds_are_stored(client, key):
    # The run's start comes from its messages when started_at is absent; an offset of +18:14 is RFC 3339 and Python.
    messages = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    for message in messages:
        message["timestamp"] = "2026-01-01T00:00:00+18:14"
    body = {"conversation_id": "c-message-offset", "run_id": "c-message-offset-run", "messages": messages}
    response = client.post("/api/v1/snapshots", json.dumps(body), content_type="application/json", **key)
    assert response.status_code == 201, response.content
    listed = client.get("/api/v1/conversations", **key)
    assert listed.status_code == 200
