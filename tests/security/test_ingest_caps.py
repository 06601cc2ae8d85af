"""Ingest caps from issue 29: a usage count outside what the database adds up answers 400 and a part past
MAX_PART_CHARS answers 413, each with nothing written, so `/overview/` sums stay inside 64-bit integers."""

import json

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.payloads import MAX_PART_CHARS, MAX_TOKEN_COUNT
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.factories import make_member
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db


def post_snapshot(client, key, messages, **extra):
    return client.post(
        "/api/v1/snapshots",
        json.dumps({"conversation_id": "c-1", "run_id": "r-1", "messages": messages}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
        **extra,
    )


def _with_usage(count: int) -> list[dict]:
    messages = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")
    response = next(m for m in messages if m["kind"] == "response")
    response["usage"]["input_tokens"] = count
    return messages


@pytest.mark.parametrize("count", [2**70, MAX_TOKEN_COUNT + 1, -1])
def test_a_token_count_the_database_cannot_sum_answers_400_and_writes_nothing(client, tenant, count):
    key = create_api_key(tenant, "server")[1]
    before = row_counts()
    response = post_snapshot(client, key, _with_usage(count))
    assert response.status_code == 400
    assert "usage.input_tokens" in response.json()["error"] and str(MAX_TOKEN_COUNT) in response.json()["error"]
    assert row_counts() == before


def test_the_largest_token_count_is_stored_and_the_overview_sums_it(client, tenant):
    key = create_api_key(tenant, "server")[1]
    assert post_snapshot(client, key, _with_usage(MAX_TOKEN_COUNT)).status_code in (200, 201)
    client.force_login(make_member(tenant, role="admin"))
    assert client.get("/overview/").status_code == 200


def test_four_messages_of_two_megabytes_answer_413_and_write_nothing(client, tenant, settings):
    settings.SESSIONDESK_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = settings.SESSIONDESK_MAX_PAYLOAD_BYTES + 1024
    key = create_api_key(tenant, "server")[1]
    big = "x" * 2_000_000
    messages = [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": big}]} for _ in range(4)]
    before = row_counts()
    response = post_snapshot(client, key, messages)
    assert response.status_code == 413
    assert "'messages[0].parts[0]'" in response.json()["error"] and str(MAX_PART_CHARS) in response.json()["error"]
    assert row_counts() == before
