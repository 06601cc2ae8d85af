"""ingest/otlp_wire and ingest/otlp (pure): the wire decoded, then pydantic-ai's spans (instrumentation formats 2 to
6) back to the messages of each run."""

import gzip

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import set_span_in_context
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.otlp import NO_CONTENT, KnownMessages, decode_export, validate
from sessions_app.ingest.otlp_wire import PROTOBUF, OtlpError, inflate, parse_request
from tests.agents import traced_weather_runs


def export(prompts, conversation_id="conv-otlp", **settings):
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    results = traced_weather_runs(provider, prompts, conversation_id=conversation_id, **settings)
    return results, encode_spans(memory.get_finished_spans())


def without_times(messages):
    dumped = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    for message in dumped:
        message.pop("timestamp", None)
        for part in message["parts"]:
            part.pop("timestamp", None)
    return dumped


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # formats 2 to 4 are deprecated, still emitted
@pytest.mark.parametrize("version", [2, 3, 4, 5, 6])
def test_every_instrumentation_format_gives_back_the_runs_messages(version):
    (result,), request = export(["Weather in Zürich?"], version=version)
    decoded = decode_export(parse_request(request.SerializeToString(), PROTOBUF))
    assert decoded.rejected_spans == 0
    (run,) = decoded.runs
    assert run.run_id == result.run_id and run.conversation_id == "conv-otlp" and run.agent == "agent"
    assert without_times(validate(run)) == without_times(result.all_messages())
    assert [(e.tool_name, e.tool_call_id, e.status) for e in run.tool_effects] == [
        ("get_weather", "call-weather-1", "completed")
    ]
    assert all(e.started_at <= e.ended_at for e in run.tool_effects)


def test_a_response_takes_its_model_request_spans_model_usage_and_end():
    (result,), request = export(["Weather in Zürich?"])
    (run,) = decode_export(request).runs
    responses = [m for m in run.messages if m["kind"] == "response"]
    truth = [m for m in result.all_messages() if m.kind == "response"]
    assert [r["usage"]["input_tokens"] for r in responses] == [t.usage.input_tokens for t in truth]
    assert {r["model_name"] for r in responses} == {"function:_weather_model:"}
    # the model the agent sent the request to, as pydantic-ai records it beside the name the provider reported
    assert {r["model_id"] for r in responses} == {"function:function:_weather_model:"}
    request_time, response_time = run.messages[0]["timestamp"], responses[0]["timestamp"]
    assert run.span.started_at.isoformat() <= request_time <= response_time <= run.span.ended_at.isoformat()


def test_without_a_conversation_id_the_trace_is_the_conversation():
    _, request = export(["Weather?"])
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                kept = [a for a in span.attributes if a.key != "gen_ai.conversation.id"]
                del span.attributes[:]
                span.attributes.extend(kept)
    (run,) = decode_export(request).runs
    assert run.conversation_id == run.span.trace_id and len(run.conversation_id) == 32


def test_content_off_rejects_the_run_with_its_spans():
    _, request = export(["Weather?"], include_content=False)
    decoded = decode_export(request)
    assert decoded.runs == []
    assert decoded.rejected == {NO_CONTENT: 4}  # the run, two model requests, one tool


def test_model_requests_whose_run_span_is_not_in_the_export_are_kept_for_it():
    _, request = export(["Weather?"])
    spans = request.resource_spans[0].scope_spans[0].spans
    kept = [s for s in spans if s.name != "invoke_agent agent"]
    del spans[:]
    spans.extend(kept)
    decoded = decode_export(request)
    assert decoded.runs == [] and decoded.rejected_spans == 0
    assert len(decoded.orphans) == 3  # waiting for their run span (ingest.traces keeps them)


def test_a_threaded_run_takes_the_known_copies_of_what_it_inherited():
    results, request = export(["Weather?", "And tomorrow?"])
    first, second = decode_export(request).runs
    known = KnownMessages(validate(first))
    inherited = known.inherit(validate(second), second.new_message_index)
    assert inherited[: second.new_message_index] == known.messages  # the same objects, times and usage
    assert without_times(inherited) == without_times(results[1].all_messages())


def test_gzip_is_inflated_up_to_the_limit_only():
    assert inflate(gzip.compress(b"x" * 100), "gzip", 100) == b"x" * 100
    with pytest.raises(OtlpError) as bomb:
        inflate(gzip.compress(b"x" * 10_000_000), "gzip", 1000)
    assert bomb.value.status == 413
    with pytest.raises(OtlpError) as cut:
        inflate(gzip.compress(b"x" * 1000)[:-12], "gzip", 10_000)
    assert cut.value.status == 400 and "truncated" in cut.value.message
    with pytest.raises(OtlpError) as other:
        inflate(b"", "deflate", 10)
    assert other.value.status == 415


def test_an_agent_run_inside_another_runs_tool_is_its_child():
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    helper = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("42")])), name="helper")

    def lead_model(messages, info):
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("The helper says 42.")])
        return ModelResponse(parts=[ToolCallPart("ask_helper", {}, tool_call_id="call-helper")])

    lead = Agent(FunctionModel(lead_model), name="lead")

    @lead.tool_plain
    async def ask_helper() -> str:
        return (await helper.run("What is the answer?", capabilities=[instrumentation])).output

    result = lead.run_sync("Ask the helper.", capabilities=[instrumentation])
    decoded = decode_export(encode_spans(memory.get_finished_spans()))
    runs = {run.agent: run for run in decoded.runs}
    assert decoded.rejected_spans == 0 and set(runs) == {"lead", "helper"}
    assert runs["lead"].parent_run_id == "" and runs["helper"].parent_run_id == result.run_id
    assert len(validate(runs["helper"])) == 2  # the helper's own request and answer, not the lead's


def test_a_run_that_raised_is_an_interrupted_snapshot_of_what_it_had():
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from sessions_app.ingest.otlp import snapshot_of_run

    def model(messages, info):
        if len(messages) > 1:
            raise RuntimeError("the provider went away")
        return ModelResponse(parts=[ToolCallPart("noop", {}, tool_call_id="call-1")])

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def noop() -> str:
        return "done"

    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    with pytest.raises(RuntimeError):
        agent.run_sync("Go.", capabilities=[instrumentation])
    (run,) = decode_export(encode_spans(memory.get_finished_spans())).runs
    assert snapshot_of_run(run, validate(run)).state == "interrupted"
    assert [m["kind"] for m in run.messages] == ["request", "response", "request"]  # up to the failed request


def test_requests_get_the_instructions_they_were_sent_with():
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("ok")])), instructions="Be brief.")
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    result = agent.run_sync("Hi.", capabilities=[instrumentation])
    (run,) = decode_export(encode_spans(memory.get_finished_spans())).runs
    assert run.messages[0]["instructions"] == "Be brief."
    assert without_times(validate(run)) == without_times(result.all_messages())


def test_a_binary_prompt_comes_back_as_its_bytes():
    from pydantic_ai import Agent, BinaryContent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("A red pixel.")])))
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    pixel = BinaryContent(data=b"\x89PNG\r\n\x1a\n-pixel", media_type="image/png")
    result = agent.run_sync(["What is this?", pixel], capabilities=[instrumentation])
    (run,) = decode_export(encode_spans(memory.get_finished_spans())).runs
    messages = validate(run)
    assert messages[0].parts[0].content[1].data == pixel.data
    assert without_times(messages) == without_times(result.all_messages())


def test_a_provider_sdks_own_chat_span_inside_the_run_is_not_paired_with_a_response():
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    (result,) = traced_weather_runs(provider, ["Weather?"], conversation_id="c")
    spans = list(memory.get_finished_spans())
    # What an OpenAI SDK instrumentation adds: a `chat` span of its own under pydantic-ai's first model request.
    first_chat = next(s for s in spans if s.name.startswith("chat"))
    with provider.get_tracer("opentelemetry.instrumentation.openai").start_as_current_span(
        "openai.chat",
        context=set_span_in_context(first_chat),
        attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 99999},
        start_time=first_chat.start_time,
    ):
        pass
    request = encode_spans(memory.get_finished_spans())
    decoded = decode_export(request)
    assert decoded.rejected_spans == 1 and "opentelemetry.instrumentation.openai" in decoded.message()
    assert without_times(validate(decoded.runs[0])) == without_times(result.all_messages())
