"""Hostile input on every API route: a 400 (or 413/415) JSON naming the problem, never a 500, nothing stored."""

import json

import pytest
from django.test import override_settings
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import weather_messages
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(tenant):
    return create_api_key(tenant, "server")[1]


def snapshot(**overrides):
    body = {
        "conversation_id": "conv-1",
        "run_id": "run-1",
        "agent": "weather",
        "step": 1,
        "messages": ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json"),
    }
    body.update(overrides)
    return body


def post(client, key, path, body, content_type="application/json"):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(path, data=data, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}")


def refused(response, status, needle=""):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert needle in response.json()["error"], response.json()
    return response


def with_message_text(text):
    body = snapshot()
    body["messages"][0]["parts"][-1]["content"] = text
    return body


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (with_message_text("before\x00after"), "NUL"),
        (snapshot(conversation_id="c\x00"), "NUL"),
        (snapshot(run_id="r\x00"), "NUL"),
        (snapshot(conversation_id="c-1\nsecond"), "'conversation_id' contains a control character"),
        (snapshot(run_id="a/b"), "'run_id' contains '/'"),
        (snapshot(conversation_id="x" * 201), "'conversation_id' is longer than 200"),
        (snapshot(step=2**40), "'step' must be at most"),
        (snapshot(step=True), "'step' must be an integer"),
        (snapshot(principal=" "), "'principal' must not be empty"),
    ],
)
def test_a_bad_snapshot_field_is_named_and_stores_nothing(client, key, body, needle):
    before = row_counts()
    refused(post(client, key, "/api/v1/snapshots", body), 400, needle)
    assert row_counts() == before


def test_a_lone_surrogate_is_refused(client, key):
    text = json.dumps(snapshot()).replace('"conv-1"', '"conv-\\ud800"')
    before = row_counts()
    refused(post(client, key, "/api/v1/snapshots", text), 400, "lone surrogate")
    assert row_counts() == before


def test_a_10000_deep_document_is_refused_before_it_is_parsed(client, key):
    before = row_counts()
    refused(post(client, key, "/api/v1/snapshots", "[" * 10_000 + "]" * 10_000), 400, "deeper than")
    refused(post(client, key, "/api/v1/receipts", '{"a":' * 10_000 + "1" + "}" * 10_000), 400, "deeper than")
    assert row_counts() == before


def test_invalid_utf8_and_other_content_types_are_refused(client, key):
    before = row_counts()
    refused(post(client, key, "/api/v1/snapshots", b'{"conversation_id": "\xff"}'), 400, "UTF-8")
    refused(post(client, key, "/api/v1/snapshots", "conversation_id=c", "application/x-www-form-urlencoded"), 415)
    refused(post(client, key, "/api/v1/snapshots", json.dumps(snapshot()), "application/xml"), 415)
    refused(post(client, key, "/api/v1/snapshots", "--x--", "multipart/form-data; boundary=x"), 415)
    refused(post(client, key, "/api/v1/snapshots", json.dumps(snapshot()), "application/json; charset=latin-1"), 415)
    refused(post(client, key, "/api/v1/snapshots", "NaN"), 400, "Invalid JSON")
    assert row_counts() == before


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"run_id": "run-1", "tool_call_id": "t", "tool_name": {"an": "object"}, "status": "started"},
         "'tool_name' must be a string"),
        ({"run_id": "run-1", "tool_call_id": "x" * 10_000, "tool_name": "t", "status": "started"},
         "'tool_call_id' is longer than 200"),
        ({"run_id": "run-1", "tool_call_id": "t", "tool_name": "x" * 10_000, "status": "started"},
         "'tool_name' is longer than 200"),
        ({"run_id": "run-1", "tool_call_id": "t", "tool_name": "n\x00", "status": "started"}, "NUL"),
        ({"run_id": "run-1", "tool_call_id": "t", "tool_name": "n", "status": "maybe"}, "'status' must be one of"),
        ({"run_id": "run-1", "tool_call_id": "t", "tool_name": "n", "status": "started", "started_at": "soon"},
         "'started_at' must be an ISO 8601"),
    ],
)
def test_a_bad_tool_effect_is_named_and_stores_nothing(client, key, tenant, body, needle):
    ingest_snapshots(tenant, [parse_snapshot(snapshot())], source="server", via="api")
    before = row_counts()
    refused(post(client, key, "/api/v1/tool-effects", body), 400, needle)
    assert row_counts() == before


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        ("/api/v1/receipts", {"run_id": "run-1", "effect": "e\x00", "evidence": "outcome", "checked_by": "x"}, "NUL"),
        ("/api/v1/receipts", {"run_id": 5, "effect": "e", "evidence": "outcome", "checked_by": "x"}, "'run_id'"),
        ("/api/v1/receipts", ["not", "an", "object"], "must be a JSON object"),
        ("/api/v1/waits", {"run_id": "run-1", "owner": "o", "decision": "d", "deadline": 12}, "'deadline'"),
        ("/api/v1/waits", {"run_id": "run-1", "owner": "o", "decision": "d", "deadline": "2099-01-01T00:00:00Z",
                           "resume_token": {"x": 1}}, "'resume_token'"),
        ("/api/v1/waits/resolve", {"run_id": "run-1", "resume_token": 12345678901234567890}, "'resume_token'"),
        ("/api/v1/waits/resolve", {"run_id": ["run-1"], "resume_token": "t" * 20}, "'run_id' must be a string"),
        ("/api/v1/agents/mailer/prompt-contract", {"kind": "label", "value": "v\x00"}, "NUL"),
    ],
)
def test_malformed_receipts_waits_and_contracts_are_400_naming_the_field(client, key, tenant, path, body, needle):
    ingest_snapshots(tenant, [parse_snapshot(snapshot())], source="server", via="api")
    before = row_counts()
    refused(post(client, key, path, body), 400, needle)
    assert row_counts() == before


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/search?q=a%00b&conversation_id=conv-1",
        "/api/v1/search?q=weather&conversation_id=c%00",
        "/api/v1/search?q=weather&conversation_id=conv-1&limit=1099511627776",
        "/api/v1/conversations/conv%00/messages?around=0",
        "/api/v1/conversations/conv-1/messages?around=99999999999999999999",
        "/api/v1/conversations/conv%00/replay",
        "/api/v1/conversations/conv-1/replay?principal=a%00",
        "/api/v1/runs/r%00/audit",
    ],
)
def test_nul_bytes_and_huge_numbers_in_urls_are_400(client, key, tenant, path):
    ingest_snapshots(tenant, [parse_snapshot(snapshot())], source="server", via="api")
    before = row_counts()
    response = client.get(path, HTTP_AUTHORIZATION=f"Bearer {key}")
    refused(response, 400)
    assert row_counts() == before


def test_a_nul_byte_in_a_page_url_is_400_not_500(client):
    assert client.get("/search/?q=a%00b").status_code == 400
    assert client.get("/conversations%00/").status_code == 400


@pytest.mark.parametrize(
    "path",
    ["/api/v1/snapshots", "/api/v1/tool-effects", "/api/v1/receipts", "/api/v1/waits", "/api/v1/waits/resolve",
     "/api/v1/agents/mailer/prompt-contract"],
)
def test_over_the_cap_is_413_json_on_every_endpoint(client, key, path):
    before = row_counts()
    with override_settings(SESSIONDESK_MAX_PAYLOAD_BYTES=1000):
        refused(post(client, key, path, json.dumps({"pad": "x" * 2000})), 413, "1000 bytes")
    assert row_counts() == before


def test_a_9_mib_audit_write_is_413_json(client, key):
    before = row_counts()
    refused(post(client, key, "/api/v1/receipts", json.dumps({"reference": "x" * (9 * 1024 * 1024)})), 413)
    assert row_counts() == before


def test_a_get_endpoint_over_the_cap_is_413_json(client, key):
    with override_settings(SESSIONDESK_MAX_PAYLOAD_BYTES=10):
        response = client.generic("GET", "/api/v1/search?q=a&scope=tenant", "x" * 100,
                                  HTTP_AUTHORIZATION=f"Bearer {key}")
    refused(response, 413)


def test_an_unhandled_api_error_is_a_500_json_that_shows_nothing(client, key, monkeypatch, settings):
    settings.DEBUG = False

    def explode(**kwargs):
        raise RuntimeError("postgres://app:hunter2-password@db/prod and the key sk_live_4eC39HqLyjWDarjtT1zdp7dc")

    monkeypatch.setattr("sessions_app.api.search.run_search", explode)
    client.raise_request_exception = False
    response = client.get("/api/v1/search?q=x&scope=tenant", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    text = response.content.decode()
    assert "hunter2" not in text and "sk_live" not in text and "Traceback" not in text and key not in text


def test_logs_never_carry_keys_or_passwords():
    import logging

    from masking.log_filter import RedactingFilter

    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "connect %s with %s", (
        "postgres://app:hunter2-password@db/prod", "Bearer sdk_s_abcdefghijklmnop1234"), None)
    RedactingFilter().filter(record)
    assert "hunter2" not in record.getMessage() and "abcdefghijklmnop1234" not in record.getMessage()


def test_debug_is_off_by_default():
    import os

    from django.conf import settings

    assert "DEBUG" not in os.environ or os.environ["DEBUG"].lower() in ("false", "0")
    assert settings.DEBUG is False


def test_10000_character_tool_names_and_call_ids_in_messages_are_never_a_500(client, key):
    body = snapshot()
    for message in body["messages"]:
        for part in message["parts"]:
            if "tool_name" in part:
                part["tool_name"] = "t" * 10_000
            if "tool_call_id" in part:
                part["tool_call_id"] = "c" * 10_000
    before = row_counts()
    response = post(client, key, "/api/v1/snapshots", body)
    assert response.status_code in (201, 400), response.content[:300]
    if response.status_code == 400:
        assert row_counts() == before
    else:
        audit = client.get("/api/v1/runs/run-1/audit", HTTP_AUTHORIZATION=f"Bearer {key}")
        assert audit.status_code == 200


def test_a_body_without_a_content_type_is_read_as_json(client, key):
    response = client.generic("POST", "/api/v1/snapshots", json.dumps(snapshot()), content_type="",
                              HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 201
