"""A threaded run's history is read from what its text adds to the run before it (`ReadHistories`): the same
messages as reading the whole text, for a fraction of the decoding; anything else is read whole."""

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_core import to_json

from sessions_app.ingest import otlp
from sessions_app.ingest.otlp import NO_CONTENT, ReadHistories, _read_history
from tests.agents import weather_agent


def run_texts(runs: int, conversation: str = "c") -> list[str]:
    """Each run's `pydantic_ai.all_messages`, as pydantic-ai's instrumentation writes it, threaded."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentation = Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    agent, history, texts = weather_agent(), None, []
    for n in range(runs):
        result = agent.run_sync(
            f"Weather, question {n}?", message_history=history, conversation_id=conversation,
            capabilities=[instrumentation],
        )  # fmt: skip
        history = result.all_messages()
        (run,) = [s for s in memory.get_finished_spans() if s.attributes.get("gen_ai.operation.name") == "invoke_agent"]
        texts.append(str(run.attributes["pydantic_ai.all_messages"]))
        memory.clear()
    return texts


@pytest.fixture
def decoded(monkeypatch):
    """The length of every text decoded."""
    sizes: list[int] = []
    real = otlp.decode_json

    def counting(body, **options):
        sizes.append(len(body))
        return real(body, **options)

    monkeypatch.setattr(otlp, "decode_json", counting)
    return sizes


def test_a_threaded_runs_history_reads_as_its_whole_text_decoding_only_what_it_adds(decoded):
    texts = run_texts(12)
    histories = ReadHistories()
    for text in texts:
        problem, messages, jsons = histories.read("c", text)
        assert (problem, messages) == _read_history(text)
        assert jsons == [to_json(message).decode() for message in messages]
    decoded.clear()
    read = ReadHistories()
    for text in texts:
        read.read("c", text)
    assert decoded[0] == len(texts[0].encode())
    assert all(size < 2 * len(texts[0].encode()) for size in decoded[1:])  # a run's own four messages, not its history


def test_a_text_that_does_not_go_on_from_the_kept_one_is_read_whole():
    histories = ReadHistories()
    first, other = run_texts(3)[-1], run_texts(3, conversation="d")[1]
    histories.read("c", first)
    assert histories.read("c", other)[:2] == _read_history(other)  # the same id, another history
    edited = first.replace("question 0", "question zero")
    assert histories.read("c", edited)[:2] == _read_history(edited)


def test_requests_that_read_whole_as_one_are_not_read_as_two():
    user = {"role": "user", "parts": [{"type": "text", "content": "Hello"}]}
    tool = {"role": "user", "parts": [{"type": "tool_call_response", "id": "t1", "name": "f", "result": "ok"}]}
    kept, grown = json.dumps([user]), json.dumps([user, tool])
    histories = ReadHistories()
    histories.read("c", kept)
    problem, messages, _ = histories.read("c", grown)
    assert (problem, messages) == _read_history(grown)
    assert [len(m["parts"]) for m in messages] == [2]


def test_a_bad_addition_is_named_as_reading_the_whole_text_names_it():
    texts = run_texts(2)
    histories = ReadHistories()
    histories.read("c", texts[0])
    for bad in (texts[1][:-1] + ",{]", texts[1][:-1] + ',{"role": "user", "parts": [{"type": "text"}]}]'):
        problem, messages, _ = histories.read("c", bad)
        assert messages is None
        assert (problem, messages) == _read_history(bad)
    assert _read_history(texts[1][:-1] + ',{"role": "user", "parts": [{"type": "text"}]}]')[0] == NO_CONTENT


def test_what_is_kept_is_bounded_by_the_text_it_holds():
    text = run_texts(5)[-1]
    histories = ReadHistories(limit=len(text) * 3 // 2)
    histories.read("a", text)
    histories.read("b", text)
    assert histories._kept.get("a") is None  # two texts weigh more than the limit: the older is forgotten
    assert histories._kept.get("b") is not None
