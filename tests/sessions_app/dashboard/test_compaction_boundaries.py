"""The conversation page marks where the real harness compacted the live history, with the strategy and the
counts its `compact_messages` spans carried in through OTLP (messages and tokens before and after); a re-sent
export adds no mark; another tenant's page is a 404."""

import re

import pytest
from django.test import Client
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai_harness.compaction import SlidingWindowCompaction
from pydantic_ai_harness.step_persistence import InMemoryStepStore, StepPersistence

from sessions_app.demo.scenarios import store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import RuntimeSpan, TranscriptEntry
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_member

pytestmark = pytest.mark.django_db
LOOKUPS = 4


def compacted_run_spans(conversation_id: str, store: InMemoryStepStore | None = None) -> bytes:
    """A real harness run (SlidingWindowCompaction) with pydantic-ai's instrumentation, as an OTLP export; its
    step snapshots go to `store` too when given (the harness's StepPersistence)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    calls = 0

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal calls
        calls += 1
        if calls <= LOOKUPS:
            return ModelResponse(parts=[ToolCallPart("lookup", {"q": f"q{calls}"}, tool_call_id=f"call-{calls}")])
        return ModelResponse(parts=[TextPart("All four looked up.")])

    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent = Agent(
        FunctionModel(model),
        capabilities=[
            SlidingWindowCompaction(max_messages=4, keep_messages=2),
            *([StepPersistence(store=store, agent_name="lookups")] if store is not None else []),
            instrumentation,
        ],
    )

    @agent.tool_plain
    def lookup(q: str) -> str:
        return f"result of {q}"

    agent.run_sync("Look four things up.", conversation_id=conversation_id, run_id=f"{conversation_id}-run")
    return encode_spans(memory.get_finished_spans()).SerializeToString()


def _post(client, key, body):
    return client.post(
        "/v1/traces", data=body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}"
    )


@pytest.fixture
def body():
    return compacted_run_spans("conv-compacted")


def test_each_compaction_span_is_stored_with_its_counts_once(client, tenant, body):
    _, key = create_api_key(tenant, "server")
    assert _post(client, key, body).status_code == 200
    assert _post(client, key, body).status_code == 200  # the same export again
    spans = RuntimeSpan.objects.filter(tenant=tenant, kind="compaction").order_by("started_at")
    assert spans.count() == LOOKUPS - 1  # the history outgrew four messages before each later model request
    for span in spans:
        assert span.facts == {
            "strategy": "SlidingWindowCompaction",
            "messages_before": 5,
            "messages_after": 3,
            "tokens_before": span.facts["tokens_before"],
            "tokens_after": span.facts["tokens_after"],
        }
        assert span.facts["tokens_after"] < span.facts["tokens_before"]
        assert span.run.conversation.external_id == "conv-compacted"


def test_the_conversation_page_marks_each_boundary_after_the_request_it_preceded(client, tenant):
    # Both doors, as a deployment with StepPersistence and OTLP has them: the snapshots give the whole transcript
    # (the run span carries only the compacted history), the spans the compactions.
    store = InMemoryStepStore()
    body = compacted_run_spans("conv-compacted", store)
    payloads = [parse_snapshot(p) for p in store_as_payloads(store)]
    ingest_snapshots(tenant, payloads, source="server", via="import")
    _, key = create_api_key(tenant, "server")
    assert _post(client, key, body).status_code == 200
    member = Client()
    member.force_login(make_member(tenant, "support"))
    page = member.get("/c/conv-compacted/").content.decode()
    marks = re.findall(r'<aside class="compaction-mark[^"]*".*?</aside>', page, re.S)
    assert len(marks) == LOOKUPS - 1
    assert all("SlidingWindowCompaction" in m and "messages 5 → 3" in m and "tokens ~" in m for m in marks)
    # Each mark follows a tool result (the request about to go to the model) and precedes the next response.
    roles = dict(TranscriptEntry.objects.filter(tenant=tenant).values_list("position", "role"))
    for mark in re.finditer(r'<aside class="compaction-mark[ "]', page):
        before = re.findall(r'<article class="msg [^"]*" id="m-(\d+)"', page[: mark.start()])
        assert roles[int(before[-1])] == "tool_result"


def test_another_tenant_sees_no_such_conversation(client, tenant, other_tenant, body):
    _, key = create_api_key(tenant, "server")
    _post(client, key, body)
    outsider = Client()
    outsider.force_login(make_member(other_tenant, "admin"))
    assert outsider.get("/c/conv-compacted/").status_code == 404
