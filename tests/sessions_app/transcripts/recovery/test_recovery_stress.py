"""Generated stress conversations (random compaction kind and thresholds, forks, cancelled tools, orphan
results, repeated byte-identical prompts and answers) recover exactly to their uncompacted twins."""

import pytest
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from model_messages.serialization import dump_message
from sessions_app.transcripts.recovery.fold import RecoveredMessage, recover_conversation, transcript_only
from tests.scenarios import run_plan, runs_from_store, stress_plan
from tests.sessions_app.transcripts.recovery.recovery_cases import hashes, shared_objects

# 180 once recovered an identical answer from an earlier run as the kept tail and doubled a run.
SEEDS = [*range(16), 180]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_stress_conversation_recovers_to_its_twin(seed):
    plan = stress_plan(seed)
    store = InMemoryStepStore()
    result = run_plan(plan, store, conversation_id=f"stress-{seed}")
    recovered = transcript_only(recover_conversation(runs_from_store(store)))
    assert hashes(recovered) == hashes(result.true_messages)


def _record(recovered: list[RecoveredMessage]) -> list[tuple[str, str, bool, bool]]:
    return [(dump_message(r.message), r.run_id, r.recovered_from_compaction, r.summary_artifact) for r in recovered]


@pytest.mark.parametrize("seed", SEEDS)
def test_shared_message_objects_recover_the_same_record_as_copies(seed):
    """A fold takes a message it has seen before as already split from its summary artifacts; the record must be
    the one copies give, artifacts and compaction flags included."""
    store = InMemoryStepStore()
    run_plan(stress_plan(seed), store, conversation_id=f"stress-{seed}")
    runs = runs_from_store(store)
    assert _record(recover_conversation(shared_objects(runs))) == _record(recover_conversation(runs))


def test_the_stress_plans_cover_every_hard_case():
    plans = [stress_plan(seed) for seed in SEEDS]
    assert {p.compaction for p in plans} == {
        None,
        "sliding_window",
        "sliding_window_no_first",
        "summarizing",
        "summarizing_no_first",
    }
    turns = [t for p in plans for t in p.turns]
    assert any(step.fails for t in turns for step in t.steps)
    assert any(t.inject_orphan_result for t in turns)
    assert any(t.history_from is not None for t in turns)
    assert any(p.step_seconds == 0 for p in plans)
