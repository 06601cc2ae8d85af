"""Exactness and cost of transcript recovery, against pydantic-ai-harness's SnapshotHistorySource.

    .venv/bin/python bench/recovery.py [--runs 5 20 40] [--trials 15]

Conversations come from real pydantic-ai agents (sessions_app.demo.scenarios: FunctionModel, the harness's
StepPersistence and SlidingWindowCompaction with its defaults, runs threaded through message_history). For each
size: the true record (the twin run without compaction), what we recover and what the reference recovers, and
the time of one whole-conversation recovery, median and p95 over the trials, for three inputs: the harness
store's own snapshots (deep copies, every message serialized per distinct copy), the same messages as shared
objects (how Sessiondesk's content-addressed store hands them over), and the reference's run_history calls.
"""

import argparse
import asyncio
import platform
import statistics
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic_ai_harness.conversation_search import SnapshotHistorySource  # noqa: E402
from pydantic_ai_harness.step_persistence import InMemoryStepStore  # noqa: E402

from sessions_app.demo.plans import generate_conversations  # noqa: E402
from sessions_app.transcripts.recovery.fold import recover_conversation, transcript_only  # noqa: E402
from sessions_app.transcripts.recovery.hashing import message_hash  # noqa: E402
from tests.scenarios import run_plan, runs_from_store  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn, trials: int) -> tuple[float, float]:
    samples = []
    for _ in range(trials):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), percentile(samples, 0.95)


def reference(store: InMemoryStepStore) -> int:
    source = SnapshotHistorySource(store)

    async def recover() -> int:
        return sum([len(await source.run_history(run_id=run.run_id)) for run in await source.list_runs()])

    return asyncio.run(recover())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[5, 20, 40])
    parser.add_argument("--trials", type=int, default=15)
    args = parser.parse_args()

    print(f"# {platform.node()} · {platform.processor() or platform.machine()} · Python {platform.python_version()}")
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {args.trials} trials")
    print(
        "| runs | snapshot messages | true | ours | reference | ours, harness copies (median / p95 ms) "
        "| ours, shared objects | reference |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for runs in args.runs:
        plan = generate_conversations(1, seed=5, min_runs=runs, max_runs=runs)[0]
        plan = replace(plan, compaction="sliding_window", max_messages=30, keep_messages=12)
        store = InMemoryStepStore()
        result = run_plan(plan, store, conversation_id="bench")
        inputs = runs_from_store(store)
        shared: dict[str, object] = {}
        shared_inputs = [
            replace(
                run,
                snapshots=[
                    replace(s, messages=[shared.setdefault(message_hash(m), m) for m in s.messages])
                    for s in run.snapshots
                ],
            )
            for run in inputs
        ]
        ours = transcript_only(recover_conversation(inputs))
        assert [message_hash(m) for m in ours] == [message_hash(m) for m in result.true_messages]
        copies = timed(lambda inputs=inputs: recover_conversation(inputs), args.trials)
        objects = timed(lambda inputs=shared_inputs: recover_conversation(inputs), args.trials)
        ref = timed(lambda store=store: reference(store), args.trials)
        total = sum(len(s.messages) for run in inputs for s in run.snapshots)
        print(
            f"| {runs} | {total} | {len(result.true_messages)} | {len(ours)} | {reference(store)} "
            f"| {copies[0]:.0f} / {copies[1]:.0f} | {objects[0]:.0f} / {objects[1]:.0f} | {ref[0]:.0f} / {ref[1]:.0f} |"
        )


if __name__ == "__main__":
    main()
