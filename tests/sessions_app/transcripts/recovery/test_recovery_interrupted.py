"""Only complete snapshots contribute; an interrupted snapshot (unsettled tool call) is for inspection only."""

import asyncio
from dataclasses import replace

from pydantic_ai.messages import ModelResponse, ToolCallPart

from sessions_app.transcripts.recovery.fold import recover_conversation, transcript_only
from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes


def tool_calls(messages) -> list[str]:
    return [
        part.tool_name
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]


def test_the_scenario_stored_an_interrupted_snapshot_and_a_started_tool_effect():
    interrupted = case("interrupted_tool")
    run_id = interrupted.result.interrupted_run_ids[0]
    states = [s.state for run in interrupted.runs if run.run_id == run_id for s in run.snapshots]
    assert "interrupted" in states and "complete" in states
    effects = asyncio.run(interrupted.store.list_unresolved_tool_effects(run_id=run_id))
    assert [(e.tool_name, e.status) for e in effects] == [("deploy", "started")]


def test_recovered_record_equals_the_twin_and_leaves_out_the_unsettled_call():
    interrupted = case("interrupted_tool")
    assert hashes(interrupted.transcript) == hashes(interrupted.result.true_messages)
    assert "deploy" not in tool_calls(interrupted.transcript)
    interrupted_snapshot = next(s for run in interrupted.runs for s in run.snapshots if s.state == "interrupted")
    assert "deploy" in tool_calls(interrupted_snapshot.messages)


def test_dropping_the_interrupted_snapshots_changes_nothing():
    runs = case("interrupted_tool").runs
    complete_only = [replace(run, snapshots=[s for s in run.snapshots if s.state == "complete"]) for run in runs]
    assert hashes(transcript_only(recover_conversation(complete_only))) == hashes(case("interrupted_tool").transcript)


def test_a_run_with_only_an_interrupted_snapshot_contributes_nothing():
    runs = case("interrupted_tool").runs
    only_interrupted = [replace(runs[-1], snapshots=[s for s in runs[-1].snapshots if s.state == "interrupted"])]
    assert recover_conversation(only_interrupted) == []


def test_a_complete_snapshot_marked_interrupted_would_be_ignored():
    # The state decides, not the content: the same messages marked interrupted contribute nothing.
    run = case("plain_tools").runs[0]
    marked = replace(run, snapshots=[replace(s, state="interrupted") for s in run.snapshots])
    assert recover_conversation([marked]) == []
