"""POST /v1/traces: a real agent's OpenTelemetry spans, sent by the official OTLP exporter, become its transcript."""

import gzip
import json

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.models import AuditEvent, Conversation, Run, Snapshot, ToolEffect
from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.transcripts.export import export_conversation
from tests.agents import traced_weather_runs
from tests.rowcounts import row_counts

PROMPTS = ["What is the weather in Zürich?", "And tomorrow?", "Thanks, and the day after?"]


@pytest.fixture
def server_key(tenant):
    return create_api_key(tenant, "server")[1]


def without_times(messages: list[dict]) -> list[dict]:
    for message in messages:
        message.pop("timestamp", None)
        for part in message["parts"]:
            part.pop("timestamp", None)
    return messages


def recorded_spans(prompts=PROMPTS, conversation_id="otlp-conv", **settings):
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    results = traced_weather_runs(provider, prompts, conversation_id=conversation_id, **settings)
    return results, memory.get_finished_spans()


def post(client, key, body: bytes, content_type="application/x-protobuf", **headers):
    if key:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    return client.post("/v1/traces", data=body, content_type=content_type, **headers)


def partial_success(response) -> ExportTraceServiceResponse:
    answer = ExportTraceServiceResponse()
    answer.ParseFromString(response.content)
    return answer


@pytest.mark.django_db(transaction=True)
def test_three_threaded_runs_sent_by_the_otlp_exporter_are_the_last_runs_history(
    live_server, tenant, server_key, monkeypatch
):
    # The README's setup, word for word: the exporter reads the endpoint and the key from the environment.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", live_server.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer%20{server_key}")
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    results = traced_weather_runs(provider, PROMPTS, conversation_id="otlp-conv")
    assert provider.force_flush()
    provider.shutdown()

    conversation = Conversation.objects.get(tenant=tenant, external_id="otlp-conv")
    runs = Run.objects.filter(conversation=conversation).order_by("started_at")
    assert [run.run_id for run in runs] == [result.run_id for result in results]
    assert {run.agent_name for run in runs} == {"agent"} and {run.state for run in runs} == {"complete"}
    assert set(Snapshot.objects.filter(run__conversation=conversation).values_list("via", flat=True)) == {"otlp"}
    exported = json.loads("".join(export_conversation(conversation, "json")))
    truth = ModelMessagesTypeAdapter.dump_python(results[-1].all_messages(), mode="json")
    # Everything pydantic-ai recorded (model, usage, run and conversation ids, tool call ids) but its clock: the
    # times are the spans' (a response ends with its model request, a request is sent when that one starts).
    assert all(message["timestamp"] for message in exported)
    assert without_times(exported) == without_times(truth)
    assert ToolEffect.objects.filter(run__conversation=conversation).count() == 3
    assert AuditEvent.objects.filter(tenant=tenant).exists()  # audited as an API snapshot is

    # The same spans again, in one gzip request this time: nothing changes.
    before = row_counts()
    exporter = OTLPSpanExporter(endpoint=f"{live_server.url}/v1/traces", compression=Compression.Gzip)
    assert exporter.export(memory.get_finished_spans()) == SpanExportResult.SUCCESS
    assert row_counts() == before


@pytest.mark.django_db
def test_gzip_json_and_protobuf_bodies_store_the_same_runs(client, tenant, server_key):
    results, spans = recorded_spans(PROMPTS[:1])
    request = encode_spans(spans)
    response = post(client, server_key, gzip.compress(request.SerializeToString()), HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-protobuf"
    assert not partial_success(response).HasField("partial_success")
    before = row_counts()

    from google.protobuf import json_format

    body = json_format.MessageToDict(request)
    for resource in body["resourceSpans"]:  # OTLP/JSON writes ids as hex, not the protobuf mapping's base64
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = __import__("base64").b64decode(span[key]).hex()
    response = post(client, server_key, json.dumps(body).encode(), content_type="application/json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json() == {}
    assert row_counts() == before  # the same run, arrived again
    assert Run.objects.get(tenant=tenant).run_id == results[0].run_id


@pytest.mark.django_db
def test_malformed_protobuf_is_a_400_status_and_changes_nothing(client, tenant, server_key):
    before = row_counts()
    response = post(client, server_key, b"\x0a\xff\xff\xff\xff\x0f garbage")
    assert response.status_code == 400
    from google.rpc.status_pb2 import Status

    status = Status()
    status.ParseFromString(response.content)
    assert "Malformed protobuf" in status.message
    assert row_counts() == before


@pytest.mark.django_db
def test_malformed_json_and_a_broken_gzip_are_400s(client, server_key):
    before = row_counts()
    assert post(client, server_key, b'{"resourceSpans": [', content_type="application/json").status_code == 400
    response = post(client, server_key, b"\x1f\x8b\x08\x00 not gzip", HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400
    assert post(client, server_key, b"", content_type="text/plain").status_code == 415
    assert post(client, server_key, b"", HTTP_CONTENT_ENCODING="br").status_code == 415
    assert row_counts() == before


@pytest.mark.django_db
def test_a_gzip_bomb_is_a_413_by_its_decompressed_size(client, server_key, settings):
    settings.SESSIONDESK_MAX_PAYLOAD_BYTES = 64 * 1024
    bomb = gzip.compress(b"\x00" * (10 * 1024 * 1024))
    assert len(bomb) < settings.SESSIONDESK_MAX_PAYLOAD_BYTES
    before = row_counts()
    response = post(client, server_key, bomb, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 413
    assert row_counts() == before


@pytest.mark.django_db
def test_runs_without_content_are_rejected_spans_saying_why(client, server_key):
    _, spans = recorded_spans(PROMPTS[:1], include_content=False)
    before = row_counts()
    response = post(client, server_key, encode_spans(spans).SerializeToString())
    assert response.status_code == 200
    answer = partial_success(response).partial_success
    assert answer.rejected_spans == len(spans)  # the run span with its model-request and tool spans
    assert "include_content=False" in answer.error_message
    assert row_counts() == before


@pytest.mark.django_db
def test_spans_not_from_pydantic_ai_are_rejected_and_the_run_is_stored(client, tenant, server_key):
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("my-web-app").start_as_current_span("GET /weather"):
        results = traced_weather_runs(provider, PROMPTS[:1], conversation_id=None)
    response = post(client, server_key, encode_spans(memory.get_finished_spans()).SerializeToString())
    answer = partial_success(response).partial_success
    assert answer.rejected_spans == 1 and "not from pydantic-ai" in answer.error_message
    assert "my-web-app" in answer.error_message
    run = Run.objects.get(tenant=tenant)
    # No conversation id given: pydantic-ai makes one up and stamps it on the run span and the messages.
    assert run.conversation.external_id == results[0].all_messages()[0].conversation_id


@pytest.mark.django_db
def test_the_api_key_decides_and_a_missing_or_wrong_one_is_a_401(client, tenant, other_tenant):
    _, spans = recorded_spans(PROMPTS[:1])
    body = encode_spans(spans).SerializeToString()
    before = row_counts()
    assert post(client, None, body).status_code == 401
    assert post(client, "sdk_s_not-a-key", body).status_code == 401
    assert row_counts() == before
    _, other_key = create_api_key(other_tenant, "server")
    assert post(client, other_key, body).status_code == 200
    assert Run.objects.filter(tenant=other_tenant).count() == 1
    assert not Run.objects.filter(tenant=tenant).exists()


@pytest.mark.django_db
def test_a_client_key_marks_the_run_client_supplied(client, tenant):
    _, key = create_api_key(tenant, "client")
    _, spans = recorded_spans(PROMPTS[:1])
    assert post(client, key, encode_spans(spans).SerializeToString()).status_code == 200
    assert Run.objects.get(tenant=tenant).source == "client"
