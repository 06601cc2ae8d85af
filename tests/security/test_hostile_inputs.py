"""Issue 29's hostile inputs through the real doors, each with its expected status and nothing written where it is
refused (the timings beside a light request are bench/security.py's, reported in docs/SECURITY.md)."""

import gzip
import json

import pytest
from google.rpc.status_pb2 import Status
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from masking.tenant_patterns import MAX_PATTERNS
from search_app.query import MAX_PREFIXES
from sessions_app.ingest.importers import read_import_file
from sessions_app.ingest.payloads import IngestError
from sessions_app.models import Conversation
from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import traced_weather_runs
from tests.factories import make_member
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db

ESCAPED_QUOTES = b'"' + b'\\"' * 65_000  # invalid JSON whose error path took 55 s
LETTERS = "abcdefghijklmnopqrstu"


@pytest.fixture
def key(tenant):
    return create_api_key(tenant, "server")[1]


def _auth(key: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


def _store(client, key, conversation: str, text: str) -> None:
    body = {"conversation_id": conversation, "run_id": f"{conversation}-r",
            "messages": [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": text}]}]}  # fmt: skip
    response = client.post("/api/v1/snapshots", json.dumps(body), content_type="application/json", **_auth(key))
    assert response.status_code in (200, 201), response.content


def _spans() -> bytes:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    traced_weather_runs(provider, ["Weather?"], conversation_id="hostile-otlp")
    return encode_spans(memory.get_finished_spans()).SerializeToString()


def test_invalid_json_of_65000_escaped_quotes_answers_400(client, key):
    before = row_counts()
    response = client.post("/api/v1/snapshots", ESCAPED_QUOTES, content_type="application/json", **_auth(key))
    assert response.status_code == 400 and "Invalid JSON" in response.json()["error"]
    assert row_counts() == before


def test_otlp_json_of_65000_escaped_quotes_answers_400_as_a_status(client, key):
    before = row_counts()
    response = client.post("/v1/traces", ESCAPED_QUOTES, content_type="application/json", **_auth(key))
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == 3 and "Invalid JSON" in response.json()["message"]
    assert row_counts() == before


def test_an_import_file_of_65000_escaped_quotes_is_refused(tmp_path):
    path = tmp_path / "hostile.json"
    path.write_bytes(ESCAPED_QUOTES)
    with pytest.raises(IngestError, match="Invalid JSON"):
        read_import_file(path)


def test_a_search_hit_beside_a_60_kb_hex_run_answers_200_with_its_snippet(client, key):
    _store(client, key, "hex-run", "canary " + "0f" * 30_000)
    response = client.get("/api/v1/search?q=canary&scope=tenant", **_auth(key))
    assert response.status_code == 200
    assert "<mark>canary</mark>" in response.json()["results"][0]["snippet_html"]


def test_420_two_letter_prefixes_answer_400_naming_the_bound(client, key):
    query = " ".join(f"{a}{b}*" for a in LETTERS for b in LETTERS)
    response = client.get("/api/v1/search", {"q": query, "scope": "tenant"}, **_auth(key))
    assert response.status_code == 400 and f"the limit is {MAX_PREFIXES}" in response.json()["error"]


def test_a_catastrophic_tenant_pattern_on_a_30001_character_message_searches(client, tenant, key):
    tenant.redaction_patterns = ["(a+)+$"]
    tenant.save(update_fields=["redaction_patterns"])
    _store(client, key, "redos", "a" * 30_000 + "!")
    response = client.get("/api/v1/search?q=aaa*&scope=tenant", **_auth(key))
    assert response.status_code == 200


def test_2000_tenant_patterns_are_refused_by_the_form_naming_the_bound(client, tenant):
    client.force_login(make_member(tenant, role="admin"))
    patterns = "\n".join(f"zq{i}[0-9]{{1000}}" for i in range(2000))
    response = client.post("/settings/redaction/", {"patterns": patterns})
    assert response.status_code in (200, 400)
    assert f"the limit is {MAX_PATTERNS}" in response.content.decode()
    tenant.refresh_from_db()
    assert tenant.redaction_patterns == []


@pytest.mark.parametrize("content_type", ["application/x-protobuf", "application/json"])
def test_otlp_without_a_valid_key_answers_401_as_a_status_in_the_request_encoding(client, content_type):
    response = client.post("/v1/traces", b"{}", content_type=content_type, HTTP_AUTHORIZATION="Bearer nope")
    assert response.status_code == 401 and response["Content-Type"] == content_type
    assert response["WWW-Authenticate"] == "Bearer"
    if content_type == "application/json":
        assert response.json()["code"] == 16 and "API key" in response.json()["message"]
    else:
        status = Status.FromString(response.content)
        assert status.code == 16 and "API key" in status.message


def test_otlp_declared_too_large_answers_413_as_a_status(client, key, settings):
    response = client.post(
        "/v1/traces", b"\x0a\x00", content_type="application/x-protobuf",
        CONTENT_LENGTH=str(settings.SESSIONDESK_MAX_PAYLOAD_BYTES + 1), **_auth(key),
    )  # fmt: skip
    assert response.status_code == 413 and Status.FromString(response.content).code == 8


def test_every_gzip_member_of_an_export_is_read(client, key):
    # Two members: an empty request (an empty protobuf message), then the spans. Reading only the first stored nothing.
    body = gzip.compress(b"") + gzip.compress(_spans())
    response = client.post(
        "/v1/traces", body, content_type="application/x-protobuf", HTTP_CONTENT_ENCODING="gzip", **_auth(key)
    )
    assert response.status_code == 200
    assert Conversation.objects.filter(external_id="hostile-otlp").exists()


def test_65000_escaped_quotes_in_a_protobuf_spans_all_messages_are_a_counted_rejection(client, key):
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    traced_weather_runs(provider, ["Weather?"], conversation_id="hostile-otlp")
    request = encode_spans(memory.get_finished_spans())
    for span in request.resource_spans[0].scope_spans[0].spans:
        for attribute in span.attributes:
            if attribute.key == "pydantic_ai.all_messages":
                attribute.value.string_value = ESCAPED_QUOTES.decode()
    before = row_counts()
    response = client.post(
        "/v1/traces", request.SerializeToString(), content_type="application/x-protobuf", **_auth(key)
    )
    answer = ExportTraceServiceResponse.FromString(response.content)
    assert response.status_code == 200 and answer.partial_success.rejected_spans >= 1
    assert "Invalid JSON" in answer.partial_success.error_message
    assert row_counts() == before


@pytest.mark.parametrize(
    "text",
    [
        "key " + "-" * 5_000,  # 201 after 11.1 s on Python's re
        "key " + "-" * 20_000,  # 500 after 60.2 s
        "key " + "Zm9vYmFy_-" * 6_000,  # a 60 kB base64url blob next to `key`: 29.0 s
        "x:// " + "a." * 100_000,  # 23.0 s
        "token=a " * 124_990,  # a part at the 1,000,000-character cap made of nothing but matches
    ],
    ids=["key-5000-dashes", "key-20000-dashes", "key-60kB-base64url", "scheme-dots", "matches-at-the-cap"],
)
def test_the_probes_detector_inputs_are_stored_with_201_and_show_no_value(client, key, text):
    _store(client, key, "hostile-detector", text)
    context = client.get("/api/v1/conversations/hostile-detector/messages", {"around": 0}, **_auth(key))
    assert context.status_code == 200
    if text.startswith("token=a"):
        assert "token=a " not in context.content.decode()
