"""A store pruned by `max_snapshots_per_run` yields what survives: a partial record, never an error."""

from dataclasses import replace

from sessions_app.transcripts.recovery.fold import recover_conversation, transcript_only
from tests.sessions_app.transcripts.recovery.recovery_cases import case, hashes, last_complete


def surviving(name: str) -> list[str]:
    """The twin's messages that some retained complete snapshot still holds, in the twin's order."""
    pruned = case(name)
    kept = {key for run in pruned.runs for s in run.snapshots if s.state == "complete" for key in hashes(s.messages)}
    return [key for key in hashes(pruned.result.true_messages) if key in kept]


def test_the_store_really_pruned_early_snapshots():
    pruned = case("pruned_store")
    assert len(pruned.runs[0].snapshots) == 2
    assert len(hashes(pruned.result.true_messages)) > len(surviving("pruned_store"))


def test_recovery_returns_exactly_the_surviving_messages_in_order():
    assert hashes(case("pruned_store").transcript) == surviving("pruned_store")


def test_the_surviving_record_ends_like_the_true_record():
    pruned = case("pruned_store")
    tail = hashes(last_complete(pruned.runs[-1]))[1:]
    assert hashes(pruned.transcript)[-len(tail) :] == hashes(pruned.result.true_messages)[-len(tail) :]


def test_a_store_left_with_only_the_last_snapshot_recovers_that_snapshot():
    run = case("sliding_window").runs[0]
    last_only = replace(run, snapshots=run.snapshots[-1:])
    assert hashes(transcript_only(recover_conversation([last_only]))) == hashes(run.snapshots[-1].messages)


def test_no_runs_and_runs_without_snapshots_give_an_empty_record():
    run = case("plain_tools").runs[0]
    assert recover_conversation([]) == []
    assert recover_conversation([replace(run, snapshots=[])]) == []
