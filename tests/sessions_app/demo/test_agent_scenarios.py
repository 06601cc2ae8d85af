"""The real-agent scenarios: deterministic, API-shaped payloads, any harness store, varied generated data."""

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai_harness.step_persistence import InMemoryStepStore, SqliteStepStore

from sessions_app.demo.plans import generate_conversations
from sessions_app.demo.scenarios import demo_payloads, store_as_payloads
from sessions_app.transcripts.recovery.fold import recover_conversation, transcript_only
from tests.scenarios import SCENARIO_NAMES, new_store, run_plan, run_scenario, runs_from_store
from tests.sessions_app.transcripts.recovery.recovery_cases import hashes

PAYLOAD_KEYS = {"conversation_id", "run_id", "agent", "parent_run_id", "step", "state", "messages"}


def test_the_same_scenario_twice_writes_identical_messages():
    first, second = InMemoryStepStore(), InMemoryStepStore()
    run_scenario("threaded_runs", first, conversation_id="conv-a")
    run_scenario("threaded_runs", second, conversation_id="conv-a")
    assert [p["messages"] for p in store_as_payloads(first)] == [p["messages"] for p in store_as_payloads(second)]


def test_payloads_have_the_api_shape_and_validate_as_pydantic_ai_messages():
    store = InMemoryStepStore()
    result = run_scenario("interrupted_tool", store, conversation_id="conv-p")
    payloads = store_as_payloads(store)
    assert all(set(p) == PAYLOAD_KEYS for p in payloads)
    assert {p["conversation_id"] for p in payloads} == {"conv-p"}
    assert [p["run_id"] for p in payloads] == sorted(p["run_id"] for p in payloads)  # write order, run by run
    assert {p["state"] for p in payloads} == {"complete", "interrupted"}
    assert {p["agent"] for p in payloads} == {"support_agent"}
    for payload in payloads:
        ModelMessagesTypeAdapter.validate_python(payload["messages"])
    assert {p["run_id"] for p in payloads} == set(result.run_ids)


def test_a_sqlite_store_written_by_the_harness_recovers_like_the_twin(tmp_path):
    store = SqliteStepStore(database=str(tmp_path / "steps.db"))
    result = run_scenario("summarizing", store, conversation_id="conv-s")
    recovered = transcript_only(recover_conversation(runs_from_store(store, "conv-s")))
    assert hashes(recovered) == hashes(result.true_messages)


def test_without_compaction_the_store_holds_the_twin_itself():
    store = InMemoryStepStore()
    result = run_scenario("sliding_window", store, conversation_id="conv-t", compaction=False)
    assert hashes(runs_from_store(store)[0].snapshots[-1].messages) == hashes(result.true_messages)


def test_the_pruned_scenario_store_keeps_two_snapshots_per_run():
    store = new_store("pruned_store")
    run_scenario("pruned_store", store, conversation_id="conv-q")
    assert [len(run.snapshots) for run in runs_from_store(store)] == [2]


def test_an_unknown_scenario_is_refused_with_the_known_names():
    with pytest.raises(ValueError, match="unknown scenario 'nope'.*sliding_window"):
        run_scenario("nope", InMemoryStepStore(), conversation_id="x")


def test_every_named_scenario_is_listed():
    assert {
        "plain_tools",
        "sliding_window",
        "sliding_window_no_first",
        "summarizing",
        "summarizing_no_first",
        "threaded_runs",
        "interrupted_tool",
        "pruned_store",
        "orphan_tool_result",
        "multilingual",
        "credentials",
    } <= set(SCENARIO_NAMES)


def test_generated_conversations_are_reproducible_and_varied():
    plans = generate_conversations(12, seed=3)
    assert plans == generate_conversations(12, seed=3)
    assert plans != generate_conversations(12, seed=4)
    assert {p.tenant for p in plans} == {"acme", "globex"}
    assert {p.compaction for p in plans} >= {None, "sliding_window", "summarizing"}
    assert any(step.fails for p in plans for t in p.turns for step in t.steps)
    assert any(t.inject_orphan_result for p in plans for t in p.turns)
    assert any(len(p.turns) > 1 for p in plans)


@pytest.mark.parametrize("index", range(6))
def test_generated_conversations_recover_to_their_twin(index):
    plan = generate_conversations(6, seed=11, min_runs=2, max_runs=4)[index]
    store = InMemoryStepStore()
    result = run_plan(plan, store, conversation_id=f"gen-{index}")
    recovered = transcript_only(recover_conversation(runs_from_store(store)))
    assert hashes(recovered) == hashes(result.true_messages)


def test_demo_payloads_group_conversations_by_tenant():
    payloads = demo_payloads(4, seed=1)
    assert set(payloads) == {"acme", "globex"}
    conversations = {p["conversation_id"] for tenant in payloads.values() for p in tenant}
    assert len(conversations) == 4
