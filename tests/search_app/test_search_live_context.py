"""Each search hit says whether its message is still in the agent's live history or was dropped by compaction,
checked against a compacted real-harness conversation: the live history is the run's last snapshot as the
harness wrote it. The API's JSON (and so the MCP tool's), the agent tool's text and the search page all say so."""

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.client.search import format_search
from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.transcripts.recovery.hashing import message_hash
from tests.factories import make_member
from tests.scenarios import run_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def live_by_position(tenant):
    store = InMemoryStepStore()
    result = run_scenario("sliding_window", store, conversation_id="conv-live")
    payloads = store_as_payloads(store)
    ingest_snapshots(tenant, [parse_snapshot(p) for p in payloads], source="server", via="import")
    last = ModelMessagesTypeAdapter.validate_python(payloads[-1]["messages"])
    live = {message_hash(message) for message in last}
    return {position: message_hash(message) in live for position, message in enumerate(result.true_messages)}


def test_api_hits_carry_the_flag_the_harness_s_live_history_gives(client, tenant, live_by_position):
    _, key = create_api_key(tenant, "server")
    body = client.get(
        "/api/v1/search",
        {"q": "invoice", "conversation_id": "conv-live", "limit": 25},
        headers={"Authorization": f"Bearer {key}"},
    ).json()
    flags = {hit["position"]: hit["in_live_context"] for hit in body["results"]}
    assert len(flags) > 4 and set(flags.values()) == {True, False}  # some dropped, some still live
    assert flags == {position: live_by_position[position] for position in flags}

    text = format_search("invoice", body)
    dropped = [block for block in text.split("---") if "dropped from your live context" in block]
    assert len(dropped) == list(flags.values()).count(False)


def test_the_search_page_marks_the_dropped_hits(client, tenant, live_by_position):
    client.force_login(make_member(tenant, "support"))
    page = client.get("/search/", {"q": "invoice", "limit": 25}).content.decode()
    assert page.count("dropped from live context") == list(live_by_position.values()).count(False)
