"""POST /v1/traces with hostile exports: every one a 4xx or a counted rejection naming it, none a 500, none stored."""

import json

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import traced_weather_runs
from tests.rowcounts import row_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(tenant):
    return create_api_key(tenant, "server")[1]


@pytest.fixture
def request_proto():
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    traced_weather_runs(provider, ["Weather?"], conversation_id="hostile")
    return encode_spans(memory.get_finished_spans())


def post(client, key, body: bytes, content_type="application/x-protobuf"):
    return client.post("/v1/traces", data=body, content_type=content_type, HTTP_AUTHORIZATION=f"Bearer {key}")


def set_attribute(request, span_name: str, key: str, value: str) -> None:
    for span in request.resource_spans[0].scope_spans[0].spans:
        if span.name.startswith(span_name):
            for attribute in span.attributes:
                if attribute.key == key:
                    attribute.value.string_value = value


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'"resourceSpans"',
        b'{"resourceSpans": {"a": 1}}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "00"}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"links": 5, "startTimeUnixNano": "-1"}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"endTimeUnixNano": "18446744073709551615"}]}]}]}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "\\u0000"}]}]}]}',
        b"[" * 5000,
    ],
)
def test_hostile_json_exports_are_4xx_and_change_nothing(client, key, body):
    before = row_counts()
    response = post(client, key, body, content_type="application/json")
    assert 400 <= response.status_code < 500 or (
        response.status_code == 200 and json.loads(response.content).get("partialSuccess")
    ), response.content
    assert row_counts() == before


def test_the_latest_span_time_is_stored_not_refused(client, key, request_proto):
    for span in request_proto.resource_spans[0].scope_spans[0].spans:
        span.end_time_unix_nano = 2**64 - 1  # fixed64's last nanosecond: the year 2554
    response = post(client, key, request_proto.SerializeToString())
    assert response.status_code == 200 and response.content == b""


@pytest.mark.parametrize(
    ("span", "attribute", "value", "reason"),
    [
        ("invoke_agent", "gen_ai.agent.call.id", "run/with/slashes", "refused as snapshots"),
        ("invoke_agent", "gen_ai.conversation.id", "conv\x00nul", "refused as snapshots"),
        ("invoke_agent", "pydantic_ai.all_messages", "{not json", "is not JSON"),
        ("invoke_agent", "pydantic_ai.all_messages", '[{"role": "assistant", "parts": [{"type": "x"}]}]', "cannot"),
        ("invoke_agent", "pydantic_ai.all_messages", '[{"role": "assistant", "parts": [], "finish_reason": "?"}]',
         "not valid"),
        ("execute_tool", "gen_ai.tool.call.id", "x" * 300, "tool-effect records"),
        ("invoke_agent", "pydantic_ai.all_messages", '[{"parts": "x"}, {"role": "assistant", "parts": 7, '
         '"finish_reason": 5}]', "not valid"),
        ("invoke_agent", "pydantic_ai.all_messages",
         '[{"role": "user", "parts": [{"type": "blob", "content": "not base64!"}]}]', "not base64"),
    ],
)
def test_hostile_spans_are_counted_as_rejected_naming_the_problem(client, key, request_proto, span, attribute,
                                                                   value, reason):
    set_attribute(request_proto, span, attribute, value)
    response = post(client, key, request_proto.SerializeToString())
    assert response.status_code == 200, response.content
    answer = ExportTraceServiceResponse()
    answer.ParseFromString(response.content)
    assert answer.partial_success.rejected_spans >= 1 and reason in answer.partial_success.error_message
