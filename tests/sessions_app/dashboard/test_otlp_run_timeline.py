"""A run that arrived as OTLP spans shows on the conversation's timeline with its model, tokens and tool call."""

import re

import pytest
from django.test import Client
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sessions_app.tenancy.api_keys import create_api_key
from tests.agents import traced_weather_runs
from tests.factories import make_member

pytestmark = pytest.mark.django_db


def test_the_timeline_shows_the_model_and_token_usage_of_an_otlp_run(client, tenant):
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    (result,) = traced_weather_runs(provider, ["Weather in Zürich?"], conversation_id="traced")
    _, key = create_api_key(tenant, "server")
    response = client.post(
        "/v1/traces",
        data=encode_spans(memory.get_finished_spans()).SerializeToString(),
        content_type="application/x-protobuf",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert response.status_code == 200

    member = Client()
    member.force_login(make_member(tenant, "support"))
    page = member.get("/c/traced/?timeline=inline").content.decode()
    usage = result.usage
    totals = re.search(r'<p class="small" id="timeline-totals">(.*?)</p>', page).group(1)
    assert totals.startswith("1 run · 2 model steps")
    assert f"<strong>{usage.input_tokens:,}</strong> input, <strong>{usage.output_tokens:,}</strong> output" in totals
    assert page.count('<td class="small mono">function:_weather_model:</td>') == 2  # each step's model
    # The tool call under the step that made it, with the duration its tool span measured.
    tool_row = re.search(r'<tr class="tool[^"]*".*?</tr>', page, re.DOTALL).group(0)
    assert "get_weather" in tool_row and "completed" in tool_row
    assert re.search(r'<td class="num">[0-9.,]+ ?(ms|s)</td>', tool_row)
