"""Recovery folded one snapshot at a time reports exactly what each snapshot changed: a record kept up to date
from those changes alone equals the record recovered from scratch, after every snapshot, on every scenario and
on 300 generated stress conversations."""

import pytest
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.transcripts.recovery.fold import RecoveryFold, RunInput, recover_conversation, run_order
from tests.scenarios import SCENARIO_NAMES, new_store, run_plan, run_scenario, runs_from_store, stress_plan

Row = tuple[int, str, bool, bool]  # (message object id, run id, recovered from compaction, summary artifact)


class KeptRecord:
    """A record maintained only from FoldChanges, as a stored transcript is."""

    def __init__(self) -> None:
        self.entries: list[list[object]] = []  # [message, run id, flag]
        self.artifacts: dict[int, list[Row]] = {}

    def follow(self, fold: RecoveryFold, change) -> None:
        for position in change.replaced:
            self.entries[position][0] = fold.entries[position].message
        for position, flag in change.flags.items():
            self.entries[position][2] = flag
        for artifact in change.artifacts:
            row = (id(artifact.message), artifact.run_id, False, True)
            self.artifacts.setdefault(change.appended_from, []).append(row)
        for position in range(change.appended_from, len(fold.entries)):
            entry = fold.entries[position]
            self.entries.append([entry.message, entry.run_id, fold.dropped(position)])

    def rows(self) -> list[Row]:
        out: list[Row] = []
        for position in range(len(self.entries) + 1):
            out.extend(self.artifacts.get(position, []))
            if position < len(self.entries):
                message, run_id, flag = self.entries[position]
                out.append((id(message), str(run_id), bool(flag), False))
        return out


def rows_of(recovered) -> list[Row]:
    return [(id(r.message), r.run_id, r.recovered_from_compaction, r.summary_artifact) for r in recovered]


def assert_changes_rebuild_the_record(runs: list[RunInput]) -> None:
    fold, kept = RecoveryFold(), KeptRecord()
    for run in sorted(runs, key=run_order):
        for snapshot in sorted(run.snapshots, key=lambda s: s.seq):
            kept.follow(fold, fold.apply(run.run_id, snapshot.state, snapshot.messages))
            assert kept.rows() == rows_of(fold.recovered())
    scratch = recover_conversation(runs)
    assert [(r.run_id, r.recovered_from_compaction, r.summary_artifact) for r in scratch] == [
        (run_id, flag, artifact) for _, run_id, flag, artifact in kept.rows()
    ]


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario(name):
    store = new_store(name)
    run_scenario(name, store, conversation_id=f"conv-{name}")
    assert_changes_rebuild_the_record(runs_from_store(store))


@pytest.mark.parametrize("block", range(10))
def test_stress_conversations(block):
    for seed in range(block * 30, block * 30 + 30):
        store = InMemoryStepStore()
        run_plan(stress_plan(seed), store, conversation_id=f"stress-{seed}", with_truth=False)
        assert_changes_rebuild_the_record(runs_from_store(store))
