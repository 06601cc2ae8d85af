"""Eight agents writing at once over real connections to a live server: no 5xx, no duplicate rows, and the
transcript equal to the one serial ingestion gives."""

import json
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.db import connection
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, Run, Snapshot, StoredMessage, TranscriptEntry
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.factories import make_tenant
from tests.scenarios import run_scenario
from tests.sessions_app.ingest.transcripts import transcript_of

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers need PostgreSQL's row locks"),
]
WRITERS = 8


def post_all(url: str, key: str, payloads: list[dict]) -> list[int]:
    """POST every payload, eight at a time, each writer on its own connection; the status codes in order."""

    def post(payload: dict) -> int:
        with httpx.Client(timeout=60) as client:
            response = client.post(
                f"{url}/api/v1/snapshots", content=json.dumps(payload), headers={"Authorization": f"Bearer {key}"}
            )
            return response.status_code

    with ThreadPoolExecutor(WRITERS) as pool:
        return list(pool.map(post, payloads))


def ingest_serially(payloads: list[dict]):
    tenant = make_tenant()
    for payload in payloads:
        ingest_snapshots(tenant, [parse_snapshot(payload)], source="server", via="api")
    return tenant


def independent_runs(conversation_id: str, count: int) -> list[dict]:
    return [
        {
            "conversation_id": conversation_id,
            "run_id": f"{conversation_id}-r{i}",
            "step": 1,
            "messages": ModelMessagesTypeAdapter.dump_python(weather_messages(f"Weather #{i}?"), mode="json"),
        }
        for i in range(count)
    ]


def assert_no_duplicates(tenant) -> None:
    runs = Run.objects.filter(tenant=tenant).values_list("run_id", flat=True)
    assert not [r for r, n in Counter(runs).items() if n > 1]
    shas = StoredMessage.objects.filter(tenant=tenant).values_list("sha256", flat=True)
    assert len(shas) == len(set(shas))
    for conversation in Conversation.objects.filter(tenant=tenant):
        positions = TranscriptEntry.objects.filter(conversation=conversation, summary_artifact=False).values_list(
            "position", flat=True
        )
        assert sorted(positions) == list(range(conversation.message_count))


def test_new_runs_into_one_conversation(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    payloads = independent_runs("busy", 24)
    codes = post_all(live_server.url, key, payloads)
    assert codes == [201] * len(payloads)
    assert Run.objects.filter(tenant=tenant).count() == 24
    assert_no_duplicates(tenant)
    assert transcript_of(tenant, "busy") == transcript_of(ingest_serially(payloads), "busy")


def test_the_steps_of_one_run_in_shuffled_order(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    store = InMemoryStepStore()
    run_scenario("sliding_window", store, conversation_id="steps")
    payloads = store_as_payloads(store)
    shuffled = list(payloads)
    random.Random(7).shuffle(shuffled)
    codes = post_all(live_server.url, key, shuffled)
    assert set(codes) == {201}
    assert Snapshot.objects.filter(tenant=tenant).count() == len(payloads)
    assert_no_duplicates(tenant)
    assert transcript_of(tenant, "steps") == transcript_of(ingest_serially(payloads), "steps")


def test_identical_payloads_store_once_and_answer_one_201(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    payload = independent_runs("same", 1)[0]
    codes = post_all(live_server.url, key, [payload] * WRITERS)
    assert sorted(codes) == [200] * (WRITERS - 1) + [201]
    assert Snapshot.objects.filter(tenant=tenant).count() == 1
    assert_no_duplicates(tenant)


def test_new_conversations_with_the_same_id(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    payloads = independent_runs("fresh", WRITERS)
    codes = post_all(live_server.url, key, payloads)
    assert codes == [201] * WRITERS
    assert Conversation.objects.filter(tenant=tenant, external_id="fresh").count() == 1
    assert_no_duplicates(tenant)
    assert transcript_of(tenant, "fresh") == transcript_of(ingest_serially(payloads), "fresh")


def test_different_conversations_at_once(live_server, tenant):
    _, key = create_api_key(tenant, "server")
    payloads = [p for i in range(WRITERS) for p in independent_runs(f"conv-{i}", 3)]
    codes = post_all(live_server.url, key, payloads)
    assert codes == [201] * len(payloads)
    assert Conversation.objects.filter(tenant=tenant).count() == WRITERS
    assert_no_duplicates(tenant)
