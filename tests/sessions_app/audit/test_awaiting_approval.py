"""A real-harness run that ends on DeferredToolRequests (a `requires_approval=True` tool), sent over OTLP, shows as
awaiting approval (its run span's `final_result` names the pending call): the run's verdict is WAITING, the API's
run and the run's audit page list the call with since when; the continuing run's answer resolves it in place,
approved or denied."""

import pytest
from django.test import Client
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ToolDenied
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import Run, RunVerdict
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_member

pytestmark = pytest.mark.django_db


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
        return ModelResponse(parts=[TextPart("Done, as decided.")])
    return ModelResponse(parts=[ToolCallPart("wipe", {"table": "orders"}, tool_call_id="call-wipe")])


def _agent(provider: TracerProvider) -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(_model),
        system_prompt="You keep the shop's database tidy.",
        output_type=[str, DeferredToolRequests],
        capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))],
    )
    agent.tool_plain(name="wipe", requires_approval=True)(lambda table: f"wiped {table}")
    return agent


def _traced(run):
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    result = run(_agent(provider))
    return result, encode_spans(memory.get_finished_spans()).SerializeToString()


class Door:
    def __init__(self, client, key):
        self.client, self.key = client, key

    def send(self, body: bytes) -> None:
        answer = self.client.post(
            "/v1/traces", data=body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {self.key}"
        )
        assert answer.status_code == 200, answer.content

    def approvals(self, run_id: str) -> list[dict]:
        answer = self.client.get(f"/api/v1/runs/{run_id}", HTTP_AUTHORIZATION=f"Bearer {self.key}")
        return answer.json()["approvals"]


@pytest.fixture
def door(client, tenant):
    return Door(client, create_api_key(tenant, "server")[1])


def _wait(conversation_id: str):
    result, body = _traced(lambda agent: agent.run_sync("Wipe the orders table.", conversation_id=conversation_id))
    assert isinstance(result.output, DeferredToolRequests)
    return result, body


def _continue(first, conversation_id: str, decision):
    results = DeferredToolResults(approvals={"call-wipe": decision})
    return _traced(
        lambda agent: agent.run_sync(
            message_history=first.all_messages(), deferred_tool_results=results, conversation_id=conversation_id
        )
    )


def test_a_run_ending_on_deferred_tool_requests_is_awaiting_approval(tenant, door):
    first, body = _wait("conv-approval")
    door.send(body)
    run = Run.objects.get(tenant=tenant, run_id=first.run_id)
    (pending,) = door.approvals(run.run_id)
    assert pending["tool_name"] == "wipe" and pending["tool_call_id"] == "call-wipe"
    assert pending["state"] == "awaiting approval" and pending["waiting_since"] and pending["decided_in_run"] is None
    verdict = RunVerdict.objects.get(run=run)
    assert verdict.verdict == Verdict.WAITING and verdict.repair_count == 0
    (finding,) = [f for f in verdict.findings if f["code"] == Verdict.WAITING]
    assert "awaiting approval" in finding["detail"] and finding["tool_name"] == "wipe"
    member = Client()
    member.force_login(make_member(tenant, "operator"))
    page = member.get(f"/r/{run.run_id}/audit").content.decode()
    approvals = page[page.index('id="approvals"') : page.index('id="tool-effects"')]
    assert "wipe" in approvals and '<span class="badge warn">awaiting approval</span>' in approvals


@pytest.mark.parametrize(("decision", "state"), [(True, "approved"), (ToolDenied("Not today."), "denied")])
def test_the_continuing_run_resolves_it_in_place(tenant, door, decision, state):
    first, body = _wait("conv-decided")
    door.send(body)
    second, body = _continue(first, "conv-decided", decision)
    assert second.output == "Done, as decided."
    door.send(body)
    (decided,) = door.approvals(first.run_id)
    assert decided["state"] == state and decided["decided_in_run"] == second.run_id and decided["decided_at"]
    # The answer is audited into the stored verdicts too: the waiting run and its conversation's list row no
    # longer say WAITING.
    run = Run.objects.select_related("conversation").get(tenant=tenant, run_id=first.run_id)
    assert RunVerdict.objects.get(run=run).verdict != Verdict.WAITING
    assert run.conversation.worst_verdict != Verdict.WAITING
    member = Client()
    member.force_login(make_member(tenant, "operator"))
    page = member.get(f"/r/{first.run_id}/audit").content.decode()
    assert f">{state}</span>" in page[page.index('id="approvals"') :]
