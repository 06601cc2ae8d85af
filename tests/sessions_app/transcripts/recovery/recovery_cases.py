"""Shared helpers for the recovery tests: run a real-agent scenario once per session, recover it, compare.

Scenario runs are cached per `(name, compaction)` because each drives real pydantic-ai agents; the stores
and results are never mutated by the tests.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache

from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai_harness.conversation_search import SnapshotHistorySource
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from model_messages.serialization import dump_message
from sessions_app.transcripts.recovery.fold import RecoveredMessage, RunInput, recover_conversation, transcript_only
from sessions_app.transcripts.recovery.hashing import message_hash
from sessions_app.transcripts.recovery.summary_artifacts import without_summary_artifacts
from tests.scenarios import ScenarioResult, new_store, run_plan, run_scenario, runs_from_store, stress_plan


@dataclass(frozen=True)
class Case:
    result: ScenarioResult
    store: InMemoryStepStore
    runs: list[RunInput]
    recovered: list[RecoveredMessage]

    @property
    def transcript(self) -> list[ModelMessage]:
        return transcript_only(self.recovered)


@cache
def case(name: str, *, compaction: bool = True) -> Case:
    store = new_store(name)
    conversation_id = f"conv-{name}"  # the same for the twin (its own store), so tool-call ids agree
    result = run_scenario(name, store, conversation_id=conversation_id, compaction=compaction)
    runs = runs_from_store(store, conversation_id)
    return Case(result, store, runs, recover_conversation(runs))


def hashes(messages: list[ModelMessage]) -> list[str]:
    return [message_hash(m) for m in messages]


def reference_record_length(store: InMemoryStepStore) -> int:
    """How many messages pydantic-ai-harness's own `SnapshotHistorySource` recovers from `store`."""
    source = SnapshotHistorySource(store)

    async def count() -> int:
        return sum([len(await source.run_history(run_id=run.run_id)) for run in await source.list_runs()])

    return asyncio.run(count())


def last_complete(run: RunInput) -> list[ModelMessage]:
    """A run's last complete snapshot as recovery sees it (no summaries, no emptied requests)."""
    complete = [s for s in sorted(run.snapshots, key=lambda s: s.seq) if s.state == "complete"]
    if not complete:
        return []
    return [m for m in without_summary_artifacts(complete[-1].messages) if m.parts]


def survives_in(message: ModelMessage, history: list[ModelMessage]) -> bool:
    """Whether the request `message` is still in `history` as parts of its requests (compaction rewrote it:
    split off its system prompt, or left it merged with a later prompt)."""
    if not isinstance(message, ModelRequest):
        return False
    available = [message_hash(ModelRequest(parts=[p])) for m in history if isinstance(m, ModelRequest) for p in m.parts]
    return all(message_hash(ModelRequest(parts=[p])) in available for p in message.parts)


def shared_objects(runs: list[RunInput]) -> list[RunInput]:
    """The runs as Sessiondesk's store gives them: one object per distinct stored message, shared by every
    snapshot that repeats it (the harness's store deep-copies each snapshot)."""
    objects: dict[str, ModelMessage] = {}

    def one(message: ModelMessage) -> ModelMessage:
        return objects.setdefault(dump_message(message), message)

    return [
        replace(run, snapshots=[replace(s, messages=[one(m) for m in s.messages]) for s in run.snapshots])
        for run in runs
    ]


def stress_conversations(seeds: range) -> Iterator[list[RunInput]]:
    """Each seed's stress conversation as the harness stores it, then the same with some runs started afresh."""
    for seed in seeds:
        plan = stress_plan(seed)
        rng = random.Random(seed)
        fresh = [
            replace(t, fresh=True, history_from=None) if i and rng.random() < 0.4 else t
            for i, t in enumerate(plan.turns)
        ]
        for variant in (plan, replace(plan, turns=tuple(fresh))):
            store = InMemoryStepStore()
            run_plan(variant, store, conversation_id=f"stress-{seed}", with_truth=False)
            yield runs_from_store(store)
