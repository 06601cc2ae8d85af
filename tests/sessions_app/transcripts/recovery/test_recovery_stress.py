"""Generated stress conversations (random compaction kind and thresholds, forks, cancelled tools, orphan
results, repeated byte-identical prompts and answers) recover exactly to their uncompacted twins."""

import pytest
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.transcripts.recovery.fold import recover_conversation, transcript_only
from tests.scenarios import run_plan, runs_from_store, stress_plan
from tests.sessions_app.transcripts.recovery.recovery_cases import hashes

# 180 once recovered an identical answer from an earlier run as the kept tail and doubled a run.
SEEDS = [*range(16), 180]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_stress_conversation_recovers_to_its_twin(seed):
    plan = stress_plan(seed)
    store = InMemoryStepStore()
    result = run_plan(plan, store, conversation_id=f"stress-{seed}")
    recovered = transcript_only(recover_conversation(runs_from_store(store)))
    assert hashes(recovered) == hashes(result.true_messages)


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
