"""The run timeline shows the real harness's approval-review and judge spans (from OTLP) under the tool call they
decided, with the decision; the spans' tool arguments are never stored."""

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
from pydantic_ai_harness.approval_reviewer import ApprovalReviewer
from pydantic_ai_harness.tool_call_judge import ToolCallJudge

from sessions_app.models import Run, RuntimeSpan
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_member

pytestmark = pytest.mark.django_db
SECRET = "ARG-7f3c-not-for-storage"


def _answer(word: str) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"response": word})])

    return FunctionModel(respond)


def reviewed_run_export(conversation_id: str) -> bytes:
    """A run whose `lookup` call a ToolCallJudge allows and whose approval-required `wipe` call an
    ApprovalReviewer approves, with pydantic-ai's instrumentation, as an OTLP export."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    moves = iter(
        [
            ToolCallPart("lookup", {"q": SECRET}, tool_call_id="call-look"),
            ToolCallPart("wipe", {"table": SECRET}, tool_call_id="call-wipe"),
            TextPart("Looked up and wiped."),
        ]
    )
    agent = Agent(
        FunctionModel(lambda messages, info: ModelResponse(parts=[next(moves)])),
        capabilities=[
            ToolCallJudge(_answer("no"), tools=["lookup"], question="Would this leak secrets?"),
            ApprovalReviewer(_answer("no"), tools=["wipe"], question="Could this destroy data?"),
            Instrumentation(settings=InstrumentationSettings(tracer_provider=provider)),
        ],
    )
    agent.tool_plain(name="lookup")(lambda q: "found")
    agent.tool_plain(name="wipe", requires_approval=True)(lambda table: "wiped")
    assert agent.run_sync("Look up, then wipe.", conversation_id=conversation_id).output == "Looked up and wiped."
    return encode_spans(memory.get_finished_spans()).SerializeToString()


@pytest.fixture
def stored(client, tenant):
    _, key = create_api_key(tenant, "server")
    body = reviewed_run_export("conv-reviewed")
    answer = client.post(
        "/v1/traces", data=body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert answer.status_code == 200
    return Run.objects.get(tenant=tenant, conversation__external_id="conv-reviewed")


def test_the_spans_are_stored_with_their_decisions_and_no_arguments(stored):
    spans = {span.kind: span.facts for span in RuntimeSpan.objects.filter(run=stored)}
    assert spans["judge"] == {"tool": "lookup", "tool_call_id": "call-look", "verdict": "allow", "model_result": "no"}
    assert spans["approval_review"] == {
        "tool": "wipe",
        "tool_call_id": "call-wipe",
        "decision": "approve",
        "model_result": "no",
    }
    assert SECRET not in str(list(RuntimeSpan.objects.values_list("facts", flat=True)))


def test_the_timeline_shows_each_decision_under_its_tool_call(tenant, stored):
    member = Client()
    member.force_login(make_member(tenant, "support"))
    page = member.get("/c/conv-reviewed/?timeline=inline").content.decode()
    lookup_row = page.index("Tool <code>lookup</code>")
    judge_row = page.index("Judge of <code>lookup</code>")
    wipe_row = page.index("Tool <code>wipe</code>")
    review_row = page.index("Approval review of <code>wipe</code>")
    assert lookup_row < judge_row < wipe_row < review_row
    assert '<span class="badge ok">allow</span>' in page[judge_row:wipe_row]
    assert '<span class="badge ok">approve</span>' in page[review_row:]
