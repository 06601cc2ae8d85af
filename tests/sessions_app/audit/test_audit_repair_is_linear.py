"""Gate 4 joins adjacent requests before pydantic-ai's repair (whose own merge is quadratic in them): the repair
must then keep, drop and synthesize exactly what it does on the history as stored, on every history we have."""

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.audit.gates import merge_adjacent_requests
from tests.scenarios import SCENARIO_NAMES, new_store, run_plan, run_scenario, runs_from_store, stress_plan
from tests.sessions_app.audit import audit_cases


def repair_outcome(messages: list[ModelMessage]) -> tuple[set[int], list[tuple[str, str]]]:
    """What a repair kept (part identities) and what it synthesized (tool name and call id), in order."""
    repaired = repair_messages(messages)
    original = {id(part) for message in messages for part in message.parts}
    kept = {id(part) for message in repaired for part in message.parts if id(part) in original}
    synthesized = [
        (part.tool_name, part.tool_call_id)
        for message in repaired
        for part in message.parts
        if id(part) not in original and isinstance(part, ToolReturnPart)
    ]
    return kept, synthesized


def assert_agrees(messages: list[ModelMessage]) -> None:
    assert repair_outcome(merge_adjacent_requests(messages)) == repair_outcome(list(messages))


def scenario_histories(store, conversation_id):
    return [list(s.messages) for run in runs_from_store(store, conversation_id) for s in run.snapshots]


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_it_agrees_on_every_snapshot_of_every_scenario(name):
    store = new_store(name)
    run_scenario(name, store, conversation_id=f"conv-{name}")
    for history in scenario_histories(store, f"conv-{name}"):
        assert_agrees(history)


@pytest.mark.parametrize("seed", range(12))
def test_it_agrees_on_stress_plans(seed):
    store = InMemoryStepStore()
    run_plan(stress_plan(seed), store, conversation_id=f"stress-{seed}", with_truth=False)
    for history in scenario_histories(store, f"stress-{seed}"):
        assert_agrees(history)


def test_it_agrees_on_the_audit_reference_histories():
    for history in (
        audit_cases.mailer_history(),
        audit_cases.history_without_system_prompt(),
        audit_cases.history_with_orphan_result(),
        audit_cases.mixed_conversation_history(),
        audit_cases.interrupted_history(),
    ):
        assert_agrees(history)


def test_it_agrees_where_adjacent_requests_hold_orphans_and_dangling_calls():
    call = ModelResponse(parts=[ToolCallPart("deploy", {"v": 1}, tool_call_id="c1"), TextPart("working")])
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("start")]),
        ModelRequest(parts=[ToolReturnPart("lookup", "stale", tool_call_id="orphan-1")]),
        ModelRequest(parts=[UserPromptPart("again")]),
        call,
        ModelRequest(parts=[UserPromptPart("still there?")]),
        ModelRequest(parts=[ToolReturnPart("deploy", "late", tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("deploy", "twice", tool_call_id="c1")]),
        ModelResponse(parts=[ToolCallPart("lookup", {}, tool_call_id="c2")]),
        ModelRequest(parts=[UserPromptPart("next")]),
        ModelRequest(parts=[UserPromptPart("and next")]),
    ]
    assert_agrees(history)
    assert len(merge_adjacent_requests(history)) == 5


def test_a_long_run_of_requests_becomes_one_request_with_the_same_parts():
    history = [ModelRequest(parts=[UserPromptPart(f"line {i}")]) for i in range(5000)]
    merged = merge_adjacent_requests(history)
    assert len(merged) == 1 and [id(p) for p in merged[0].parts] == [id(m.parts[0]) for m in history]
