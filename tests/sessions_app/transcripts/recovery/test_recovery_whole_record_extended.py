"""A snapshot that repeats the whole record (the very message objects, as Sessiondesk's content-addressed store
hands them out) and adds to it is folded by looking only at what it adds: every change it reports and the record
it leaves are those of the general alignment, on every scenario, on stress conversations and on threaded runs, and
where another lineage ends inside what it adds, the general alignment decides."""

from copy import deepcopy
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from model_messages.serialization import dump_message
from sessions_app.transcripts.recovery.fold import FoldChange, RecoveryFold, RunInput, SnapshotInput, run_order
from tests.agents import weather_agent, weather_messages
from tests.scenarios import SCENARIO_NAMES, new_store, run_scenario, runs_from_store
from tests.sessions_app.transcripts.recovery.recovery_cases import shared_objects, stress_conversations

Step = tuple[FoldChange, list[tuple[str, str, bool, bool]]]


def fold_steps(runs: list[RunInput], extend_whole_record: bool) -> tuple[list[Step], int]:
    """Each snapshot's change and the record after it (messages as bytes), and how often the shortcut was taken."""
    fold = RecoveryFold()
    fold.extend_whole_record = extend_whole_record
    taken = 0
    real = fold._extend

    def counting(*args, **kwargs):
        nonlocal taken
        taken += 1
        return real(*args, **kwargs)

    fold._extend = counting  # type: ignore[method-assign]
    steps: list[Step] = []
    for run in sorted(runs, key=run_order):
        for snapshot in sorted(run.snapshots, key=lambda s: s.seq):
            change = fold.apply(run.run_id, snapshot.state, snapshot.messages)
            record = [
                (dump_message(r.message), r.run_id, r.recovered_from_compaction, r.summary_artifact)
                for r in fold.recovered()
            ]
            steps.append((change, record))
    return steps, taken


def assert_same_fold(runs: list[RunInput]) -> int:
    """The shortcut changes nothing; returns how often it was taken."""
    fast, taken = fold_steps(runs, True)
    general, never = fold_steps(runs, False)
    assert never == 0
    assert fast == general
    return taken


def threaded(questions: list[str]) -> list[RunInput]:
    """The real agent's runs threaded through `message_history`: each run's snapshot is its whole history, the
    inherited messages the very objects the snapshot before it carried."""
    agent, runs, history = weather_agent(), [], None
    for i, question in enumerate(questions):
        history = agent.run_sync(question, message_history=history).all_messages()
        started = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=i)
        runs.append(RunInput(f"t{i}", None, started, [SnapshotInput(0, "complete", list(history))], arrival=i))
    return runs


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario(name):
    store = new_store(name)
    run_scenario(name, store, conversation_id=f"conv-{name}")
    assert_same_fold(shared_objects(runs_from_store(store)))


@pytest.mark.parametrize("block", range(2))
def test_stress_conversations(block):
    seeds = range(block * 30, block * 30 + 30)
    taken = sum(assert_same_fold(shared_objects(runs)) for runs in stress_conversations(seeds))
    assert taken > 0


def test_a_threaded_conversation_takes_the_shortcut_for_every_run_after_its_first():
    runs = threaded([f"Weather, question {i}?" for i in range(40)])
    assert assert_same_fold(runs) == 39


def test_copies_instead_of_the_same_objects_are_aligned_in_general():
    """A harness store deep-copies each snapshot: nothing is the very object, so nothing is taken as repeated."""
    runs = threaded([f"Weather, question {i}?" for i in range(5)])
    copied = [replace(r, snapshots=[replace(s, messages=deepcopy(s.messages)) for s in r.snapshots]) for r in runs]
    assert assert_same_fold(copied) == 0


def test_a_run_adding_an_answer_that_ended_an_earlier_run_is_aligned_in_general():
    """Every weather run ends with the same answer. A new run that repeats the record and adds that answer before
    its last message may continue the earlier run whose lineage ends there (`choose_base`): the shortcut is not
    taken for it, and the record is the general one."""
    runs = threaded(["First?", "Second?"])
    record = list(runs[-1].snapshots[0].messages)
    first_answer = runs[0].snapshots[0].messages[-1]
    added = [*weather_messages("Again?")[:-1], first_answer, *weather_messages("More?")[:2]]
    start = runs[-1].started_at + timedelta(minutes=1)
    runs.append(RunInput("t2", None, start, [SnapshotInput(0, "complete", [*record, *added])], arrival=2))
    fast, taken = fold_steps(runs, True)
    assert taken == 1  # the second run only
    assert fast == fold_steps(runs, False)[0]


def test_a_later_step_of_the_current_run_takes_the_shortcut():
    runs = threaded(["First?", "Second?"])
    record = list(runs[-1].snapshots[0].messages)
    later = SnapshotInput(1, "complete", [*record, *weather_messages("And tomorrow?")])
    runs[-1] = replace(runs[-1], snapshots=[*runs[-1].snapshots, later])
    assert assert_same_fold(runs) == 2


def test_a_record_holding_more_than_the_current_lineage_is_aligned_in_general():
    """Two runs of their own, then runs whose history holds both: the current lineage is the second run's only, so
    repeating the whole record is no continuation of it as it stands, and a compaction after shows the difference
    (what the first run said is not part of the lineage, so it is not recovered from compaction)."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    first, second = weather_messages("First?"), weather_messages("Second?")
    runs = [
        RunInput("a", None, start, [SnapshotInput(0, "complete", first)], arrival=0),
        RunInput("b", None, start + timedelta(minutes=1), [SnapshotInput(0, "complete", second)], arrival=1),
    ]
    history = [*first, *second]
    for i in range(2):
        history = [*history, *weather_messages(f"Then {i}?")[1:]]
        snapshot = SnapshotInput(0, "complete", list(history))
        runs.append(RunInput(f"t{i}", None, start + timedelta(minutes=2 + i), [snapshot], arrival=2 + i))
    compacted = [*history[-6:], *weather_messages("Last?")[1:]]
    runs.append(RunInput("c", None, start + timedelta(minutes=9), [SnapshotInput(0, "complete", compacted)], arrival=9))
    assert_same_fold(runs)


def test_a_step_repeating_what_its_run_dropped_is_aligned_in_general():
    """A run compacts, then its next step holds the whole record again: its lineage is the whole record but not all
    of it was live, so the step brings dropped messages back (their flags change) and the general alignment runs."""
    runs = threaded(["First?", "Second?", "Third?"])
    history = list(runs[-1].snapshots[0].messages)
    own = weather_messages("Compacted?")[1:]
    more = weather_messages("Whole again?")[1:]
    started = runs[-1].started_at + timedelta(minutes=1)
    steps = [SnapshotInput(0, "complete", [*history[-6:], *own]), SnapshotInput(1, "complete", [*history, *own, *more])]
    runs.append(RunInput("c", None, started, steps, arrival=9))
    fast, taken = fold_steps(runs, True)
    assert taken == 2  # the second and third runs only
    assert fast == fold_steps(runs, False)[0]
    assert any(change.flags for change, _ in fast)
