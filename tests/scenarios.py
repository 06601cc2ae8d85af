"""Named agent scenarios, their uncompacted twins and generated stress plans: the truth recovery tests assert.

Built on the demo recorder (sessions_app.demo.scenarios): each scenario drives a real `Agent` through
`FunctionModel` with pydantic-ai-harness's `StepPersistence` and compaction. A plan's *twin* runs the same
script without compaction into a private store; since the clock is held, its messages are byte-identical, and
its record is what recovery must return. Benchmarks import from here too.

    store = InMemoryStepStore()                      # new_store("pruned_store") for the pruned scenario
    result = run_scenario("sliding_window", store, conversation_id="conv-1")
    result.run_ids, result.true_messages             # the twin's record (no compaction)
    payloads = store_as_payloads(store)              # POST /api/v1/snapshots bodies, in write order
    runs = runs_from_store(store, "conv-1")          # recovery.RunInput list
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.demo.plans import CompactionKind, ConversationPlan, ToolStep, Turn, generate_conversations, tool_steps
from sessions_app.demo.scenarios import record_plan, store_as_payloads, store_runs
from sessions_app.transcripts.recovery.fold import RunInput, SnapshotInput


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    conversation_id: str
    run_ids: list[str]  # in start order
    true_messages: list[ModelMessage]  # the twin's record: what recovery must return
    interrupted_run_ids: list[str] = field(default_factory=list)
    submitted_histories: dict[str, list[ModelMessage]] = field(default_factory=dict)  # message_history per run
    plan: ConversationPlan | None = None


def _true_record(store: InMemoryStepStore, plan: ConversationPlan, run_ids: list[str]) -> list[ModelMessage]:
    """The twin's record: what each run added, as its last complete snapshot holds it.

    A run's own messages start at the request carrying its prompt (the last one with that text: later runs
    may repeat an earlier prompt). What precedes it is the history the run was given, which pydantic-ai may
    have reshaped on loading (adjacent requests merged, an orphan result emptied), so it is not compared.
    """
    record: list[ModelMessage] = []
    for turn, run_id in zip(plan.turns, run_ids, strict=True):
        snapshots = asyncio.run(store.list_snapshots(run_id=run_id))
        if not snapshots:
            continue
        messages = [m for m in snapshots[-1].messages if not (isinstance(m, ModelRequest) and not m.parts)]
        starts = [
            index
            for index, message in enumerate(messages)
            if isinstance(message, ModelRequest)
            and any(isinstance(p, UserPromptPart) and p.content == turn.prompt for p in message.parts)
        ]
        record.extend(messages[starts[-1] :])
    return record


def run_plan(
    plan: ConversationPlan,
    store: Any,
    *,
    conversation_id: str,
    compaction: bool = True,
    with_truth: bool = True,
) -> ScenarioResult:
    """Run `plan` into `store` (with its compaction unless `compaction=False`).

    With `with_truth` (the default) the twin without compaction also runs, into a private store, to give
    `true_messages`; pass `with_truth=False` where only the store matters (demo data, benchmarks).
    """

    outcome = record_plan(plan, store, conversation_id=conversation_id, compaction=compaction)
    true_messages: list[ModelMessage] = []
    if with_truth:
        twin_store = InMemoryStepStore()
        record_plan(plan, twin_store, conversation_id=conversation_id, compaction=False)
        true_messages = _true_record(twin_store, plan, outcome.run_ids)
    return ScenarioResult(
        name=plan.name,
        conversation_id=conversation_id,
        run_ids=outcome.run_ids,
        true_messages=true_messages,
        interrupted_run_ids=outcome.interrupted,
        submitted_histories=outcome.histories,
        plan=plan,
    )


def _single(name: str, compaction: CompactionKind | None) -> ConversationPlan:
    # Six model steps, compaction above 4 messages keeping 2: the setting under which the harness's own
    # SnapshotHistorySource recovers 24 messages for 12 (ANCHORS.md).
    return ConversationPlan(
        name=name,
        compaction=compaction,
        max_messages=4,
        keep_messages=2,
        turns=(
            Turn(
                "Check the five invoices for order 4471 and tell me which one is overdue.",
                tool_steps("invoice", 5),
                "Invoice 3 is overdue by 12 days.",
            ),
        ),
    )


def _threaded(name: str, compaction: CompactionKind | None) -> ConversationPlan:
    return ConversationPlan(
        name=name,
        compaction=compaction,
        turns=(
            Turn("Find the failing nightly builds.", tool_steps("build", 3), "Builds 2 and 3 failed."),
            Turn("Why did build 3 fail?", tool_steps("log", 2, offset=3), "A flaky network test timed out."),
            Turn("continue", tool_steps("retry", 2, offset=5), "The retried build passed."),
            Turn("continue", (), "Nothing else is failing."),
        ),
    )


_MULTILINGUAL = ConversationPlan(
    name="multilingual",
    compaction="sliding_window",
    turns=(
        Turn(
            "Wie ist das Wetter in Zürich? Und schick mir das résumé von Zoë.",
            (
                ToolStep("get_weather", "Zürich", "Zürich: 4 °C, leichter Schneefall, Föhn ab Mittag."),
                ToolStep("read_file", "résumé-zoë.pdf", "Zoë Müller — résumé: naïve café owner in Genève."),
            ),
            "In Zürich sind es 4 °C mit leichtem Schneefall; das résumé von Zoë liegt bei.",
        ),
        Turn(
            "Thời tiết ở Hà Nội hôm nay thế nào?",
            (ToolStep("get_weather", "Hà Nội", "Hà Nội: 18 °C, mưa phùn, độ ẩm 92%."),),
            "Hôm nay Hà Nội 18 °C, có mưa phùn.",
        ),
        Turn(
            "请查询北京的天气，并总结订单状态。",
            (
                ToolStep("get_weather", "北京", "北京：晴，零下三度，空气质量良好。"),
                ToolStep("lookup", "订单 8812", "订单 8812：已发货，预计周五送达上海。"),
            ),
            "北京今天晴，零下三度；订单 8812 已发货，预计周五送达。",
        ),
    ),
)


_CREDENTIALS = ConversationPlan(
    name="credentials",
    turns=(
        Turn(
            "Why does the payment webhook return 401?",
            (
                ToolStep(
                    "read_file",
                    ".env.production",
                    "STRIPE_API_KEY=sk-live-51HxQe2eZvKYlo2C0aB3dE4fG5hI6jK7lM8nO9pQ\n"
                    "WEBHOOK_SECRET=whsec_9f8e7d6c5b4a3210\n"
                    "Authorization: Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a",
                ),
                ToolStep("run_query", "select status from webhooks limit 1", "status=401 unauthorized"),
            ),
            "The webhook uses a revoked live key; rotate STRIPE_API_KEY and redeploy.",
        ),
    ),
)


_SCENARIOS: dict[str, ConversationPlan] = {
    "plain_tools": _single("plain_tools", None),
    "sliding_window": _single("sliding_window", "sliding_window"),
    "sliding_window_no_first": _single("sliding_window_no_first", "sliding_window_no_first"),
    "summarizing": _single("summarizing", "summarizing"),
    "summarizing_no_first": _single("summarizing_no_first", "summarizing_no_first"),
    "threaded_runs": _threaded("threaded_runs", "sliding_window"),
    "threaded_summarizing": _threaded("threaded_summarizing", "summarizing"),
    "repeated_prompts": ConversationPlan(
        name="repeated_prompts",
        compaction="sliding_window",
        max_messages=4,
        keep_messages=2,
        step_seconds=0,
        turns=(
            Turn("Is the queue empty?", tool_steps("queue", 1), "The queue is empty."),
            Turn("continue", (), "Still nothing new."),
            Turn("continue", (), "Still nothing new."),
            Turn("continue", (), "Still nothing new."),
        ),
    ),
    "forked_run": ConversationPlan(
        name="forked_run",
        compaction="sliding_window",
        turns=(
            Turn("Draft a reply to ticket 881.", tool_steps("ticket", 2), "Draft A is ready."),
            Turn("Make it more formal.", tool_steps("style", 2, offset=2), "Draft B is formal."),
            Turn("Actually, start again from draft A, shorter.", tool_steps("short", 2, offset=4), "Draft C.", 0),
        ),
    ),
    "interrupted_tool": ConversationPlan(
        name="interrupted_tool",
        compaction="sliding_window",
        turns=(
            Turn("Prepare the release notes for 2.4.", tool_steps("notes", 3), "Release notes are ready."),
            Turn(
                "Deploy 2.4 to production.",
                (
                    ToolStep("run_query", "pending migrations", "0 pending migrations"),
                    ToolStep("deploy", "production 2.4", "", fails=True),
                ),
                "Deployed.",
            ),
        ),
    ),
    "pruned_store": ConversationPlan(
        name="pruned_store",
        compaction="sliding_window",
        max_snapshots_per_run=2,
        turns=(Turn("Reconcile the six ledger accounts.", tool_steps("ledger", 6), "Accounts 2 and 5 differ."),),
    ),
    "orphan_tool_result": ConversationPlan(
        name="orphan_tool_result",
        turns=(
            Turn("Look up customer 1204.", tool_steps("customer", 1), "Customer 1204 is active."),
            Turn(
                "And their last order?",
                tool_steps("order", 1, offset=1),
                "Their last order shipped Monday.",
                inject_orphan_result=True,
            ),
        ),
    ),
    "multilingual": _MULTILINGUAL,
    "credentials": _CREDENTIALS,
}


SCENARIO_NAMES: tuple[str, ...] = tuple(_SCENARIOS)


def scenario_plan(name: str) -> ConversationPlan:
    """The plan behind a named scenario; a clear error names the known ones."""
    try:
        return _SCENARIOS[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; known: {', '.join(SCENARIO_NAMES)}") from None


def new_store(name: str) -> InMemoryStepStore:
    """An in-memory store configured as the scenario needs (`pruned_store` keeps 2 snapshots per run)."""
    return InMemoryStepStore(max_snapshots_per_run=scenario_plan(name).max_snapshots_per_run)


def run_scenario(
    name: str, store: Any, *, conversation_id: str, seed: int = 0, compaction: bool = True
) -> ScenarioResult:
    """Run the named scenario into `store`; `seed` shifts the scripted start time (the content is fixed).

    Pruning is the store's setting: pass `new_store("pruned_store")` (or a store built with
    `max_snapshots_per_run`) to get the pruned case.
    """
    plan = scenario_plan(name)
    if seed:
        plan = _with_start(plan, plan.started_at + timedelta(days=seed))
    return run_plan(plan, store, conversation_id=conversation_id, compaction=compaction)


def _with_start(plan: ConversationPlan, started_at: datetime) -> ConversationPlan:
    return replace(plan, started_at=started_at)


def runs_from_store(store: Any, conversation_id: str | None = None) -> list[RunInput]:
    """The store's runs (of one conversation, or all) as `recovery.RunInput`, interrupted snapshots included."""
    return [
        RunInput(
            run_id=run.run_id,
            parent_run_id=run.parent_run_id,
            started_at=run.started_at,
            snapshots=[
                SnapshotInput(seq=seq, state=snapshot.state, messages=list(snapshot.messages))
                for seq, snapshot in enumerate(snapshots)
            ],
        )
        for run, snapshots in asyncio.run(store_runs(store, conversation_id))
    ]


def stress_plan(seed: int) -> ConversationPlan:
    """A reproducible conversation that stresses recovery: 1 to 6 runs with a random compaction kind and
    thresholds (2 to 9 messages), sometimes a fork, a tool cancelled mid-call, an orphan tool result, and a
    held clock so that prompts and answers repeat byte for byte."""
    rng = random.Random(seed)
    plan = generate_conversations(1, seed=seed, min_runs=1, max_runs=6)[0]
    max_messages = rng.randint(2, 9)
    turns = list(plan.turns)
    for index, turn in enumerate(turns):
        if rng.random() < 0.15 and turn.steps:
            cancelled = ToolStep("deploy", "production", "", fails=True)
            turns[index] = replace(turn, steps=(*turn.steps[: rng.randint(0, len(turn.steps))], cancelled))
        if index > 0 and rng.random() < 0.15:
            turns[index] = replace(turns[index], inject_orphan_result=True)
    if len(turns) > 2 and rng.random() < 0.3:
        fork = rng.randrange(2, len(turns))
        turns[fork] = replace(turns[fork], history_from=rng.randrange(0, fork - 1))
    kinds: tuple[CompactionKind | None, ...] = (
        None,
        "sliding_window",
        "sliding_window_no_first",
        "summarizing",
        "summarizing_no_first",
    )
    return replace(
        plan,
        name=f"stress-{seed}",
        turns=tuple(turns),
        compaction=rng.choice(kinds),
        max_messages=max_messages,
        keep_messages=rng.randint(0, max_messages - 1),
        step_seconds=rng.choice((0, 7)),
    )


def threaded_payloads(runs: int = 1000, *, runs_per_conversation: int = 5, seed: int = 0) -> list[dict[str, Any]]:
    """Payloads of `runs` runs threaded through `message_history`, for ingest benchmarks (one tenant)."""
    conversations = max(1, runs // runs_per_conversation)
    plans = generate_conversations(
        conversations, seed=seed, min_runs=runs_per_conversation, max_runs=runs_per_conversation
    )
    payloads: list[dict[str, Any]] = []
    for index, plan in enumerate(plans):
        store = InMemoryStepStore()
        record_plan(plan, store, conversation_id=f"bench-{seed}-{index:04d}")
        payloads.extend(store_as_payloads(store))
    return payloads

