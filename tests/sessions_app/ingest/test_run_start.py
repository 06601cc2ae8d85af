"""A run starts at its own first message, even when its snapshot ends in a request not yet stamped with a run.

The harness persists a step before the model answers, so a snapshot can end in a ModelRequest with no run id and
no timestamp. A compacted thread also keeps the conversation's very first message. Recovery orders runs by their
start: taking the start from every message there would put every run of the thread at the thread's beginning.
"""

from dataclasses import replace

from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.plans import generate_conversations
from sessions_app.demo.scenarios import record_plan, store_as_payloads
from sessions_app.ingest.payloads import parse_snapshot, run_start
from tests.agents import weather_agent


def test_an_unstamped_request_at_the_end_does_not_make_the_run_start_with_what_it_inherited():
    agent = weather_agent()
    first = agent.run_sync("Weather?").all_messages()
    second = agent.run_sync("And tomorrow?", message_history=first).all_messages()
    pending = ModelRequest(parts=[ToolReturnPart("get_weather", "sunny", tool_call_id="late")])
    pending.timestamp, pending.run_id = None, None  # as the harness persists it: not sent yet
    own_start = min(m.timestamp for m in second[len(first) :])
    assert run_start([*second, pending]) == own_start
    assert run_start(second) == own_start


def test_every_run_of_a_compacted_thread_starts_after_the_one_before():
    plan = generate_conversations(1, seed=7, min_runs=12, max_runs=12)[0]
    plan = replace(plan, compaction="sliding_window", max_messages=12, keep_messages=6)
    store = InMemoryStepStore()
    record_plan(plan, store, conversation_id="thread")
    starts: dict[str, object] = {}
    for row in store_as_payloads(store):
        snapshot = parse_snapshot(row)
        starts.setdefault(snapshot.run_id, run_start(snapshot.messages))
    ordered = list(starts.values())
    assert len(ordered) == 12
    assert ordered == sorted(ordered)  # type: ignore[type-var]
    assert len(set(ordered)) == 12
