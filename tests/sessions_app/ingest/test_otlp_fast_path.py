"""A threaded conversation sent run by run through OTLP costs the new messages: the stored transcript is read
once per process (then only the rows added since), inherited messages are recognised before validation, and the
exported transcript stays the agent's own history."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, BinaryContent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from sessions_app.ingest import message_memo, traces
from sessions_app.models import Conversation, StoredMessage, TranscriptEntry
from sessions_app.tenancy.api_keys import create_api_key
from sessions_app.transcripts import fold_cache
from sessions_app.transcripts.export import export_conversation
from tests.agents import weather_agent

RUNS = 25


def without_times(messages: list[dict]) -> list[dict]:
    for message in messages:
        message.pop("timestamp", None)
        for part in message["parts"]:
            part.pop("timestamp", None)
    return messages


def instrumented() -> tuple[InMemorySpanExporter, Instrumentation]:
    """An instrumentation capability whose finished spans are kept in memory."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory, Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))


def post_export(client, key: str, body: bytes) -> None:
    response = client.post(
        "/v1/traces", data=body, content_type="application/x-protobuf", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert response.status_code == 200, response.content


def exported(tenant, external_id: str) -> list[dict]:
    conversation = Conversation.objects.get(tenant=tenant, external_id=external_id)
    return without_times(json.loads("".join(export_conversation(conversation, "json"))))


def truth(history) -> list[dict]:
    return without_times(ModelMessagesTypeAdapter.dump_python(history, mode="json"))


def threaded_exports(runs: int) -> tuple[list[bytes], list]:
    """Each run's spans as its own protobuf export, and the last run's whole history."""
    memory, instrumentation = instrumented()
    agent = weather_agent()
    history = None
    bodies = []
    for n in range(runs):
        result = agent.run_sync(
            f"Weather, question {n}?", message_history=history, conversation_id="fast", capabilities=[instrumentation]
        )
        history = result.all_messages()
        bodies.append(encode_spans(memory.get_finished_spans()).SerializeToString())
        memory.clear()
    return bodies, history


@pytest.mark.django_db
def test_many_threaded_runs_read_each_stored_row_once_validate_only_new_messages_and_stay_exact(
    client, tenant, monkeypatch
):
    traces.forget_stored_copies()
    fold_cache.forget_all()
    _, key = create_api_key(tenant, "server")
    bodies, history = threaded_exports(RUNS)
    loaded = []
    real_load = message_memo.load_message

    def counting_load(data):
        loaded.append(data)
        return real_load(data)

    monkeypatch.setattr(message_memo, "load_message", counting_load)
    for body in bodies:
        post_export(client, key, body)

    assert len(history) == 4 * RUNS
    assert exported(tenant, "fast") == truth(history)
    # Every stored row was read once over all the runs, not the whole transcript for each run.
    assert len(loaded) == len(history) - 4
    assert StoredMessage.objects.filter(tenant=tenant).count() == len(history)


@pytest.mark.django_db
def test_a_process_that_never_saw_the_conversation_reads_it_whole_and_stays_exact(client, tenant):
    _, key = create_api_key(tenant, "server")
    bodies, history = threaded_exports(6)
    for number, body in enumerate(bodies):
        if number % 2:
            traces.forget_stored_copies()  # another worker took the previous run
            fold_cache.forget_all()
        post_export(client, key, body)
    assert exported(tenant, "fast") == truth(history)


@pytest.mark.django_db
def test_a_thread_that_began_with_an_image_goes_on_and_stays_exact(client, tenant):
    """An image's bytes are no UTF-8 text: its message has no trace key, so it is validated as any new message is,
    and the runs after it are stored as they came (not a 500)."""
    _, key = create_api_key(tenant, "server")
    memory, instrumentation = instrumented()
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("A red pixel.")])))
    pixel = BinaryContent(data=b"\x89PNG\r\n\x1a\n-pixel", media_type="image/png")
    history = None
    for prompt in (["What is this?", pixel], "And now?", "Once more?"):
        history = agent.run_sync(
            prompt, message_history=history, conversation_id="image", capabilities=[instrumentation]
        ).all_messages()
        post_export(client, key, encode_spans(memory.get_finished_spans()).SerializeToString())
        memory.clear()
    assert exported(tenant, "image") == truth(history)


@pytest.mark.django_db
def test_the_rows_added_since_a_process_last_read_are_found_by_id_not_by_scanning_the_history(client, tenant):
    """The stored-copies read of a threaded run asks for the conversation's rows written since this process last
    looked by conversation and id, in id order, and an index leads with exactly those columns: the database reads
    the new rows, not the history (asked by conversation external id in position order, PostgreSQL read every row of
    the position index: bench/results/issue24-2026-12-07h/stored-copies-plans.txt). The query's shape and the
    index, not a plan: a test's handful of rows leaves the planner's choice to chance."""
    traces.forget_stored_copies()
    _, key = create_api_key(tenant, "server")
    bodies, _ = threaded_exports(3)
    for body in bodies[:-1]:
        post_export(client, key, body)
    with CaptureQueriesContext(connection) as queries:
        post_export(client, key, bodies[-1])
    table = TranscriptEntry._meta.db_table
    (read,) = [q["sql"] for q in queries if f'FROM "{table}"' in q["sql"] and f'"{table}"."id" >' in q["sql"]]
    assert f'"{table}"."conversation_id" = ' in read
    assert read.split(" FROM ")[1].rstrip().endswith(("ORDER BY 1 ASC", f'ORDER BY "{table}"."id" ASC')), read
    assert read.startswith(f'SELECT "{table}"."id" '), read  # so that ORDER BY 1 is by id
    with connection.cursor() as cursor:
        indexes = connection.introspection.get_constraints(cursor, table).values()
    assert any(index["index"] and index["columns"] == ["conversation_id", "id"] for index in indexes)
