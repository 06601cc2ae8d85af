"""A run's first snapshot is aligned only with the earlier lineages that could align with it at all: the record
is the same as when every earlier lineage is aligned, on every scenario, on stress conversations, on conversations
whose runs start afresh with byte-identical prompts, and on many independent runs of one agent."""

from dataclasses import replace

import pytest

from model_messages.serialization import dump_message
from sessions_app.transcripts.recovery import alignment
from sessions_app.transcripts.recovery.fold import RecoveryFold, RunInput, run_order
from tests.scenarios import SCENARIO_NAMES, new_store, run_scenario, runs_from_store
from tests.sessions_app.transcripts.recovery.recovery_cases import stress_conversations
from tests.sessions_app.transcripts.recovery.test_recovery_independent_runs import independent_runs


def folded(runs: list[RunInput], filter_candidates: bool) -> list[tuple[str, str, bool, bool]]:
    fold = RecoveryFold()
    fold.filter_candidates = filter_candidates
    for run in sorted(runs, key=run_order):
        for snapshot in sorted(run.snapshots, key=lambda s: s.seq):
            fold.apply(run.run_id, snapshot.state, snapshot.messages)
    # Each position's message as bytes: a later copy (other stamped fields) shows, and so would another message.
    return [
        (dump_message(r.message), r.run_id, r.recovered_from_compaction, r.summary_artifact) for r in fold.recovered()
    ]


def assert_same_record(runs: list[RunInput]) -> None:
    assert folded(runs, True) == folded(runs, False)


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario(name):
    store = new_store(name)
    run_scenario(name, store, conversation_id=f"conv-{name}")
    assert_same_record(runs_from_store(store))


@pytest.mark.parametrize("block", range(2))
def test_stress_conversations_and_runs_started_afresh(block):
    for runs in stress_conversations(range(block * 25, block * 25 + 25)):
        assert_same_record(runs)


def test_many_independent_runs():
    runs, _ = independent_runs(60)
    assert_same_record(runs)


class WatchedRuns(list):
    """The fold's runs, noting every walk over them."""

    walks = 0

    def __iter__(self):
        WatchedRuns.walks += 1
        return super().__iter__()

    def __reversed__(self):
        WatchedRuns.walks += 1
        return super().__reversed__()


def watch(monkeypatch, fold: RecoveryFold) -> list:
    """From now on, the lineages `fold` aligns (returned, as they come) and its walks over its runs (WatchedRuns)."""
    aligned = []
    real = alignment.align

    def counting(lineage, *args, **kwargs):
        aligned.append(lineage)
        return real(lineage, *args, **kwargs)

    monkeypatch.setattr(alignment, "align", counting)
    fold._finished = WatchedRuns(fold._finished)
    WatchedRuns.walks = 0
    return aligned


@pytest.mark.parametrize("earlier", [10, 300])
def test_a_new_runs_first_snapshot_finds_its_lineages_by_lookup_not_by_a_scan(monkeypatch, earlier):
    """Neither the runs walked nor the lineages aligned grow with the runs before."""
    runs, _ = independent_runs(earlier + 1)
    fold = RecoveryFold()
    for run in runs[:earlier]:
        for snapshot in run.snapshots:
            fold.apply(run.run_id, snapshot.state, snapshot.messages)
    aligned = watch(monkeypatch, fold)
    first = runs[earlier].snapshots[0]
    fold.apply(runs[earlier].run_id, first.state, first.messages)
    assert WatchedRuns.walks == 0
    assert len(aligned) <= 1


@pytest.mark.parametrize("stamped", [True, False])
def test_runs_that_all_end_with_the_same_answer_are_not_each_a_candidate(monkeypatch, stamped):
    """Every weather run ends "The weather is sunny in Zürich.": a new run's whole history, arriving at once, must
    not be aligned against every earlier run for it; nor when its messages carry no run id (so it may continue
    the most recent run, which is aligned, but no scan follows)."""
    runs, _ = independent_runs(301)
    if not stamped:
        runs = [
            replace(
                run,
                snapshots=[replace(s, messages=[replace(m, run_id=None) for m in s.messages]) for s in run.snapshots],
            )
            for run in runs
        ]
    fold = RecoveryFold()
    for run in runs[:300]:
        for snapshot in run.snapshots:
            fold.apply(run.run_id, snapshot.state, snapshot.messages)
    aligned = watch(monkeypatch, fold)
    whole = runs[300].snapshots[-1]
    fold.apply(runs[300].run_id, whole.state, whole.messages)
    assert WatchedRuns.walks == 0
    assert len(aligned) <= 1
    assert_same_record(runs)
