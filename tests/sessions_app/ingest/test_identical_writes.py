"""Identical writes at the same moment are stored once: eight POSTs of one snapshot without an idempotency key,
each on its own thread and database connection, answer one 201 and seven 200 naming the same snapshot, on
PostgreSQL and SQLite. The body leaves out the timestamps pydantic-ai would fill in with the time of validation,
so only a digest of what was sent can tell the eight apart from eight different snapshots."""

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections
from django.test import Client

from sessions_app.models import Snapshot, SnapshotMessage, StoredMessage, TranscriptEntry
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_tenant

pytestmark = pytest.mark.django_db(transaction=True)
WRITERS = 8

UNTIMED = {
    "conversation_id": "same",
    "run_id": "same-run",
    "messages": [
        {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "Weather in Paris?"}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "Sunny, 21 degrees."}]},
    ],
}


def _post_at_once(key: str, body: dict, writers: int = WRITERS) -> list[tuple[int, dict]]:
    start = threading.Barrier(writers)

    def post(_: int) -> tuple[int, dict]:
        try:
            client = Client(headers={"Authorization": f"Bearer {key}"})
            start.wait()
            response = client.post("/api/v1/snapshots", json.dumps(body), content_type="application/json")
            return response.status_code, response.json()
        finally:
            connections.close_all()  # this thread's own connection

    with ThreadPoolExecutor(writers) as pool:
        return list(pool.map(post, range(writers)))


def test_identical_posts_at_once_store_one_snapshot():
    tenant = make_tenant()
    _, key = create_api_key(tenant, "server")
    answers = _post_at_once(key, UNTIMED)
    assert sorted(status for status, _ in answers) == [200] * (WRITERS - 1) + [201]
    assert len({body["snapshot_id"] for _, body in answers}) == 1
    assert [body["created"] for status, body in answers if status == 201] == [True]
    assert Snapshot.objects.filter(tenant=tenant).count() == 1
    assert SnapshotMessage.objects.filter(tenant=tenant).count() == 2
    assert StoredMessage.objects.filter(tenant=tenant).count() == 2
    assert TranscriptEntry.objects.filter(tenant=tenant).count() == 2


def test_the_same_body_later_is_the_same_snapshot_and_a_changed_one_is_new():
    tenant = make_tenant()
    _, key = create_api_key(tenant, "server")
    client = Client(headers={"Authorization": f"Bearer {key}"})
    first = client.post("/api/v1/snapshots", json.dumps(UNTIMED), content_type="application/json")
    again = client.post("/api/v1/snapshots", json.dumps(UNTIMED), content_type="application/json")
    changed = {**UNTIMED, "messages": [*UNTIMED["messages"], UNTIMED["messages"][0]]}
    other = client.post("/api/v1/snapshots", json.dumps(changed), content_type="application/json")
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert again.json()["snapshot_id"] == first.json()["snapshot_id"] != other.json()["snapshot_id"]
