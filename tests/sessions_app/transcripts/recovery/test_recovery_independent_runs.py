"""Runs of the same agent started afresh in one conversation (same system prompt, no message_history) are runs of
their own: none inherits another's lineage, so nothing is flagged as recovered from compaction, and the cost of a
new run does not grow with every earlier run's history."""

from datetime import UTC, datetime, timedelta

from sessions_app.transcripts.recovery.fold import RunInput, SnapshotInput, recover_conversation
from tests.agents import weather_messages
from tests.sessions_app.transcripts.recovery.recovery_cases import hashes


def independent_runs(count: int) -> tuple[list[RunInput], list]:
    runs, truth = [], []
    for i in range(count):
        messages = weather_messages(f"Weather #{i}?")
        steps = [SnapshotInput(step, "complete", messages[: 2 + 2 * step]) for step in range(2)]
        start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=i)
        runs.append(RunInput(run_id=f"r{i}", parent_run_id=None, started_at=start, snapshots=steps, arrival=i))
        truth.extend(messages)
    return runs, truth


def test_each_run_keeps_its_own_messages_in_order():
    runs, truth = independent_runs(6)
    recovered = recover_conversation(runs)
    assert hashes([r.message for r in recovered]) == hashes(truth)
    assert [r.run_id for r in recovered] == [f"r{i}" for i in range(6) for _ in range(4)]


def test_nothing_of_an_independent_run_is_flagged_as_recovered_from_compaction():
    runs, _ = independent_runs(6)
    assert not any(r.recovered_from_compaction for r in recover_conversation(runs))


def test_the_same_question_asked_afresh_is_recorded_twice():
    first, second = weather_messages("Weather?"), weather_messages("Weather?")
    start = datetime(2026, 1, 1, tzinfo=UTC)
    runs = [
        RunInput("a", None, start, [SnapshotInput(0, "complete", first)], arrival=1),
        RunInput("b", None, start + timedelta(minutes=5), [SnapshotInput(0, "complete", second)], arrival=2),
    ]
    recovered = recover_conversation(runs)
    assert [r.run_id for r in recovered] == ["a"] * 4 + ["b"] * 4
    assert not any(r.recovered_from_compaction for r in recovered)
