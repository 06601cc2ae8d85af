"""Runs of one conversation threaded through `message_history`: inherited messages once, repeats kept."""

from dataclasses import replace
from datetime import timedelta

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart

from sessions_app.transcripts.recovery.fold import recover_conversation, transcript_only
from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes, reference_record_length

THREADED = ["threaded_runs", "threaded_summarizing", "repeated_prompts", "forked_run", "multilingual"]


def prompts(messages) -> list[str]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


@pytest.mark.parametrize("name", THREADED)
def test_recovered_conversation_equals_the_twin_runs_without_compaction(name):
    compacted = case(name)
    assert hashes(compacted.transcript) == hashes(compacted.result.true_messages)


@pytest.mark.parametrize("name", ["threaded_runs", "repeated_prompts", "forked_run"])
def test_later_runs_really_carried_inherited_messages_in_their_snapshots(name):
    # Otherwise "inherited messages are not counted twice" would be tested on nothing.
    compacted = case(name)
    for index, run in enumerate(compacted.runs[1:], start=1):
        earlier = {key for prior in compacted.runs[:index] for s in prior.snapshots for key in hashes(s.messages)}
        assert len(set(hashes(run.snapshots[0].messages)) & earlier) >= 2, run.run_id


@pytest.mark.parametrize("name", ["threaded_runs", "repeated_prompts"])
def test_an_uncompacted_thread_recovers_to_the_same_record(name):
    twin = case(name, compaction=False)
    assert hashes(twin.transcript) == hashes(twin.result.true_messages)


def test_the_same_continue_prompt_in_two_runs_is_kept_twice():
    assert prompts(case("threaded_runs").transcript).count("continue") == 2


def test_a_repeated_identical_exchange_is_kept_at_each_of_its_positions():
    transcript = case("repeated_prompts").transcript
    keys = hashes(transcript)
    # The scenario holds the clock still, so the three "continue" exchanges are byte-identical.
    assert len(set(keys[-6:])) == 2
    assert prompts(transcript).count("continue") == 3
    assert len(transcript) == len(case("repeated_prompts").result.true_messages)


def test_the_harness_reference_loses_or_doubles_messages_across_threaded_runs():
    compacted = case("threaded_runs")
    assert reference_record_length(compacted.store) != len(compacted.result.true_messages)


def test_each_message_is_attributed_to_the_run_that_first_contributed_it():
    compacted = case("threaded_runs")
    by_run = {run_id: [] for run_id in compacted.result.run_ids}
    for recovered in compacted.recovered:
        if not recovered.summary_artifact:
            by_run[recovered.run_id].append(recovered.message)
    for run_id, messages in by_run.items():
        own_prompts = prompts(messages)
        assert len(own_prompts) == 1, run_id


def test_a_fork_keeps_the_abandoned_branch_and_adds_only_its_own_messages():
    forked = case("forked_run")
    texts = prompts(forked.transcript)
    assert texts == [
        "Draft a reply to ticket 881.",
        "Make it more formal.",
        "Actually, start again from draft A, shorter.",
    ]


def test_runs_are_ordered_by_start_time_whatever_order_they_are_given_in():
    runs = case("threaded_runs").runs
    assert hashes(transcript_only(recover_conversation(list(reversed(runs))))) == hashes(
        case("threaded_runs").transcript
    )


def test_snapshots_are_taken_in_write_order_whatever_order_they_are_given_in():
    runs = [replace(run, snapshots=list(reversed(run.snapshots))) for run in case("threaded_runs").runs]
    assert hashes(transcript_only(recover_conversation(runs))) == hashes(case("threaded_runs").transcript)


def test_runs_that_start_at_the_same_instant_are_ordered_by_run_id():
    runs = case("threaded_runs").runs
    same_start = [replace(run, started_at=runs[0].started_at) for run in runs]
    assert [r.run_id for r in runs] == sorted(r.run_id for r in runs)
    assert hashes(transcript_only(recover_conversation(list(reversed(same_start))))) == hashes(
        case("threaded_runs").transcript
    )
    shifted = [replace(run, started_at=run.started_at + timedelta(hours=1)) for run in runs]
    assert hashes(transcript_only(recover_conversation(shifted))) == hashes(case("threaded_runs").transcript)
