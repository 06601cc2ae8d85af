"""Real pydantic-ai agent runs that write pydantic-ai-harness step snapshots: fixtures, demo data, benchmarks.

Every scenario drives a real `Agent` through pydantic-ai's `FunctionModel` (no network) with the harness's
`StepPersistence` writing into the store you pass (`InMemoryStepStore`, `SqliteStepStore`, ...), plus the
harness's `SlidingWindowCompaction` or `SummarizingCompaction` where the scenario compacts.

Runs are deterministic: the model follows a script, tool results come from the script, usage is reported
explicitly (pydantic-ai would otherwise estimate it from the possibly compacted history it is sent) and
pydantic-ai's clock is held to a scripted time while the scenario runs (part timestamps are part of a
message's content hash). So the same scenario without compaction, its *twin*, produces byte-identical
messages, and its record is the truth recovery must reproduce.

    store = InMemoryStepStore()                      # new_store("pruned_store") for the pruned scenario
    result = run_scenario("sliding_window", store, conversation_id="conv-1")
    result.run_ids, result.true_messages             # the twin's record (no compaction)
    payloads = store_as_payloads(store)              # POST /api/v1/snapshots bodies, in write order
    runs = runs_from_store(store, "conv-1")          # recovery.RunInput list

Generated data: `generate_conversations(count, seed=...)` gives varied `ConversationPlan`s (topics in several
languages, tool calls, compaction on some, an interrupted tool call, an orphan tool result), `run_plan(plan,
store)` runs one, `demo_payloads()` gives about 50 conversations over two tenants as API payloads, and
`threaded_payloads(runs=1000)` gives threaded runs for ingest benchmarks, and `stress_plan(seed)` gives conversations
that stress recovery (random compaction and thresholds, forks, cancelled tools, orphans, byte-identical repeats).

This module imports pydantic-ai-harness, a test and optional dependency; the product itself does not.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pydantic_ai._utils as pydantic_ai_utils
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from pydantic_ai_harness.compaction import SlidingWindowCompaction, SummarizingCompaction
from pydantic_ai_harness.step_persistence import InMemoryStepStore, StepPersistence

from sessions_app.core.recovery import RunInput, SnapshotInput

CompactionKind = Literal["sliding_window", "sliding_window_no_first", "summarizing", "summarizing_no_first"]

TOOL_NAMES = ("lookup", "search_docs", "run_query", "get_weather", "read_file", "deploy")


@dataclass(frozen=True)
class ToolStep:
    """One tool call the model makes, and the result the tool returns."""

    tool: str
    argument: str
    result: str
    fails: bool = False  # the tool is cancelled mid-call: the run stops with an unsettled call


@dataclass(frozen=True)
class Turn:
    """One `Agent.run`: a user prompt, the model's tool calls in order, its final answer."""

    prompt: str
    steps: tuple[ToolStep, ...]
    answer: str
    history_from: int | None = None  # run index whose final history this run continues; None: previous
    fresh: bool = False  # starts the conversation over (no message_history)
    inject_orphan_result: bool = False  # a stray tool result lands in the history before this run


@dataclass(frozen=True)
class ConversationPlan:
    """A whole conversation: its runs, its compaction, where it belongs."""

    name: str
    turns: tuple[Turn, ...]
    system_prompt: str = "You are a careful support agent. Use the tools; quote exact values."
    agent_name: str = "support_agent"
    compaction: CompactionKind | None = None
    max_messages: int = 6
    keep_messages: int = 3
    max_snapshots_per_run: int | None = None
    tenant: str = "acme"
    title: str = ""
    started_at: datetime = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    step_seconds: int = 7  # scripted clock advance per model call; 0 keeps repeated exchanges identical


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    conversation_id: str
    run_ids: list[str]  # in start order
    true_messages: list[ModelMessage]  # the twin's record: what recovery must return
    interrupted_run_ids: list[str] = field(default_factory=list)
    submitted_histories: dict[str, list[ModelMessage]] = field(default_factory=dict)  # message_history per run
    plan: ConversationPlan | None = None


# --- deterministic clock ---------------------------------------------------------------------------------


class _ScriptedClock:
    now_value: datetime = datetime(2026, 1, 1, tzinfo=UTC)

    @classmethod
    def now(cls, tz: Any = None) -> datetime:
        return cls.now_value


@contextmanager
def _scripted_clock() -> Iterator[type[_ScriptedClock]]:
    # pydantic-ai stamps every part with `pydantic_ai._utils.now_utc()`, which reads the module's
    # `datetime` name at call time; holding it makes a twin run's messages byte-identical.
    original = pydantic_ai_utils.datetime
    pydantic_ai_utils.datetime = _ScriptedClock  # type: ignore[misc,assignment]
    try:
        yield _ScriptedClock
    finally:
        pydantic_ai_utils.datetime = original  # type: ignore[misc]


# --- the scripted agent ----------------------------------------------------------------------------------


@dataclass
class _RunScript:
    turn: Turn
    call_prefix: str
    clock_base: datetime
    step_seconds: int
    calls: int = 0

    def results(self) -> dict[str, ToolStep]:
        return {self.call_id(i): step for i, step in enumerate(self.turn.steps)}

    def call_id(self, index: int) -> str:
        return f"{self.call_prefix}-c{index + 1}"


class _ToolCancelled(BaseException):
    """Raised by a scripted tool to stop the run mid-call, as a killed worker would."""


def _model_for(script: _RunScript) -> FunctionModel:
    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # The script, not the (possibly compacted) history, decides the next move, so a compacted run and
        # its twin answer alike.
        index = script.calls
        script.calls += 1
        _ScriptedClock.now_value = script.clock_base + timedelta(seconds=script.step_seconds * (index + 1))
        if index < len(script.turn.steps):
            step = script.turn.steps[index]
            part: ToolCallPart | TextPart = ToolCallPart(
                step.tool, {"argument": step.argument}, tool_call_id=script.call_id(index)
            )
            output = 12 + len(step.argument) // 4
        else:
            part = TextPart(script.turn.answer)
            output = 8 + len(script.turn.answer) // 4
        return ModelResponse(parts=[part], usage=RequestUsage(input_tokens=120 + 40 * index, output_tokens=output))

    return FunctionModel(respond, model_name="scenario-model")


async def _summarize(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = "".join(
        part.content for m in messages for part in m.parts if isinstance(getattr(part, "content", None), str)
    )
    calls = prompt.count("Tool Call") or prompt.count("tool_call") or 1
    text = f"Summary: the user asked for help; the agent made about {calls} tool calls and reported results."
    return ModelResponse(parts=[TextPart(text)], usage=RequestUsage(input_tokens=200, output_tokens=30))


def _compaction(plan: ConversationPlan) -> list[Any]:
    kind = plan.compaction
    if kind is None:
        return []
    common = {"max_messages": plan.max_messages, "keep_messages": plan.keep_messages}
    if kind == "sliding_window":
        return [SlidingWindowCompaction(**common)]
    if kind == "sliding_window_no_first":
        return [SlidingWindowCompaction(**common, preserve_first_user_message=False, receipts=True)]
    summarizer = FunctionModel(_summarize, model_name="scenario-summarizer")
    if kind == "summarizing":
        return [SummarizingCompaction(model=summarizer, **common)]
    return [
        SummarizingCompaction(
            model=summarizer, **common, preserve_first_user_message=False, receipts=True, incremental=False
        )
    ]


def _agent(plan: ConversationPlan, script: _RunScript, persistence: StepPersistence, compact: bool) -> Agent:
    results = script.results()

    async def use_tool(ctx: RunContext[None], argument: str) -> str:
        step = results[ctx.tool_call_id or ""]
        if step.fails:
            raise _ToolCancelled(f"{step.tool} was cancelled mid-call")
        return step.result

    capabilities: list[Any] = [*(_compaction(plan) if compact else []), persistence]
    agent: Agent[None, str] = Agent(
        _model_for(script), system_prompt=plan.system_prompt, capabilities=capabilities, name=plan.agent_name
    )
    for name in sorted({step.tool for step in script.turn.steps}):
        agent.tool(use_tool, name=name, description=f"The {name} tool.")
    return agent


def _orphan_result(call_prefix: str) -> ModelRequest:
    return ModelRequest(
        parts=[ToolReturnPart("lookup", "stale result from a retried worker", tool_call_id=f"{call_prefix}-orphan")]
    )


@dataclass
class _Outcome:
    run_ids: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    histories: dict[str, list[ModelMessage]] = field(default_factory=dict)  # message_history each run got


async def _run_plan(plan: ConversationPlan, store: Any, conversation_id: str, compact: bool) -> _Outcome:
    """Run every turn into `store`."""
    outcome = _Outcome()
    finals: list[list[ModelMessage]] = []
    for index, turn in enumerate(plan.turns):
        run_id = f"{conversation_id}-run-{index + 1}"
        history: list[ModelMessage] = []
        if not turn.fresh and finals:
            source = turn.history_from if turn.history_from is not None else len(finals) - 1
            history = list(finals[source])
        clock_base = plan.started_at + timedelta(minutes=15 * index if plan.step_seconds else 0)
        if turn.inject_orphan_result:
            _ScriptedClock.now_value = clock_base
            history.append(_orphan_result(run_id))
        script = _RunScript(turn, call_prefix=run_id, clock_base=clock_base, step_seconds=plan.step_seconds)
        persistence = StepPersistence(store=store, run_id=run_id, agent_name=plan.agent_name)
        agent = _agent(plan, script, persistence, compact)
        _ScriptedClock.now_value = clock_base
        outcome.run_ids.append(run_id)
        # pydantic-ai repairs the history it is given in place (an orphan result is emptied out), so the
        # history as submitted is copied where a repair will happen.
        outcome.histories[run_id] = deepcopy(history) if turn.inject_orphan_result else list(history)
        try:
            result = await agent.run(
                turn.prompt, message_history=history or None, conversation_id=conversation_id, run_id=run_id
            )
        except _ToolCancelled:
            outcome.interrupted.append(run_id)
            snapshot = await store.latest_snapshot(run_id=run_id)
            finals.append(list(snapshot.messages) if snapshot else history)
            continue
        finals.append(list(result.all_messages()))
    return outcome


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

    def run(target: Any, compact: bool) -> _Outcome:
        with _scripted_clock():
            return asyncio.run(_run_plan(plan, target, conversation_id, compact))

    outcome = run(store, compaction and plan.compaction is not None)
    true_messages: list[ModelMessage] = []
    if with_truth:
        twin_store = InMemoryStepStore()
        run(twin_store, False)
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


# --- named scenarios -------------------------------------------------------------------------------------


def _steps(topic: str, count: int, offset: int = 0) -> tuple[ToolStep, ...]:
    tools = ("lookup", "search_docs", "run_query", "read_file")
    return tuple(
        ToolStep(
            tools[(i + offset) % len(tools)],
            f"{topic} item {i + offset + 1}",
            f"{topic} record {i + offset + 1}: status ok, value {(i + offset + 1) * 37}",
        )
        for i in range(count)
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
                _steps("invoice", 5),
                "Invoice 3 is overdue by 12 days.",
            ),
        ),
    )


def _threaded(name: str, compaction: CompactionKind | None) -> ConversationPlan:
    return ConversationPlan(
        name=name,
        compaction=compaction,
        turns=(
            Turn("Find the failing nightly builds.", _steps("build", 3), "Builds 2 and 3 failed."),
            Turn("Why did build 3 fail?", _steps("log", 2, offset=3), "A flaky network test timed out."),
            Turn("continue", _steps("retry", 2, offset=5), "The retried build passed."),
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
            Turn("Is the queue empty?", _steps("queue", 1), "The queue is empty."),
            Turn("continue", (), "Still nothing new."),
            Turn("continue", (), "Still nothing new."),
            Turn("continue", (), "Still nothing new."),
        ),
    ),
    "forked_run": ConversationPlan(
        name="forked_run",
        compaction="sliding_window",
        turns=(
            Turn("Draft a reply to ticket 881.", _steps("ticket", 2), "Draft A is ready."),
            Turn("Make it more formal.", _steps("style", 2, offset=2), "Draft B is formal."),
            Turn("Actually, start again from draft A, shorter.", _steps("short", 2, offset=4), "Draft C.", 0),
        ),
    ),
    "interrupted_tool": ConversationPlan(
        name="interrupted_tool",
        compaction="sliding_window",
        turns=(
            Turn("Prepare the release notes for 2.4.", _steps("notes", 3), "Release notes are ready."),
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
        turns=(Turn("Reconcile the six ledger accounts.", _steps("ledger", 6), "Accounts 2 and 5 differ."),),
    ),
    "orphan_tool_result": ConversationPlan(
        name="orphan_tool_result",
        turns=(
            Turn("Look up customer 1204.", _steps("customer", 1), "Customer 1204 is active."),
            Turn(
                "And their last order?",
                _steps("order", 1, offset=1),
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


# --- reading a harness store -----------------------------------------------------------------------------


async def _store_runs(store: Any, conversation_id: str | None) -> list[tuple[Any, list[Any]]]:
    runs = await store.list_runs(conversation_id=conversation_id)
    out = []
    for run in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        out.append((run, await store.list_snapshots(run_id=run.run_id, include_interrupted=True)))
    return out


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
        for run, snapshots in asyncio.run(_store_runs(store, conversation_id))
    ]


def store_as_payloads(store: Any, conversation_id: str | None = None) -> list[dict[str, Any]]:
    """API-shaped snapshot payloads (POST /api/v1/snapshots bodies) in write order."""
    payloads: list[dict[str, Any]] = []
    for run, snapshots in asyncio.run(_store_runs(store, conversation_id)):
        for snapshot in snapshots:
            payloads.append(
                {
                    "conversation_id": snapshot.conversation_id or run.conversation_id,
                    "run_id": run.run_id,
                    "agent": run.agent_name or snapshot.agent_name or "",
                    "parent_run_id": run.parent_run_id,
                    "step": snapshot.step_index,
                    "state": snapshot.state,
                    "messages": ModelMessagesTypeAdapter.dump_python(snapshot.messages, mode="json"),
                }
            )
    return payloads


# --- generated conversations -----------------------------------------------------------------------------

_TOPICS: tuple[tuple[str, str, str, str], ...] = (
    # (title, prompt, tool subject, answer)
    ("Refund for order", "The customer wants a refund for order {n}.", "order", "Refund issued for order {n}."),
    ("Nightly build", "Why did nightly build {n} fail?", "build", "Build {n} failed on a flaky test."),
    ("Password reset", "User {n} cannot reset their password.", "account", "Reset link re-sent to user {n}."),
    ("Shipping delay", "Where is parcel {n}?", "parcel", "Parcel {n} is in Rotterdam, due Thursday."),
    ("Invoice mismatch", "Invoice {n} total does not match the PO.", "invoice", "Invoice {n} double-counted VAT."),
    ("Zürich office", "Book the Zürich room for the résumé review {n}.", "calendar", "Room booked in Zürich."),
    ("Hà Nội kho hàng", "Kiểm tra tồn kho mã {n} ở Hà Nội.", "kho", "Mã {n} còn 42 sản phẩm tại Hà Nội."),
    ("上海订单", "请查一下订单 {n} 的物流状态。", "订单", "订单 {n} 已到达上海分拣中心。"),
    ("API key leak", "Did key rotation {n} remove sk-live keys from logs?", "secrets", "Rotation {n} is done."),
    ("Database latency", "Query latency spiked on shard {n}.", "metrics", "Shard {n} lost an index."),
)


_FOLLOW_UPS = ("continue", "Any update?", "Can you double-check that?", "Và sau đó?", "然后呢？", "Und jetzt?")


def generate_conversations(
    count: int, *, seed: int = 0, tenants: Sequence[str] = ("acme", "globex"), min_runs: int = 1, max_runs: int = 4
) -> list[ConversationPlan]:
    """`count` varied, reproducible conversation plans spread over `tenants`.

    Topics in English, German/French, Vietnamese and Chinese; 0 to 5 tool calls a run; compaction on about
    half; the first plans include an interrupted tool call, an orphan tool result and leaked credentials.
    """
    rng = random.Random(seed)
    kinds: tuple[CompactionKind | None, ...] = (
        None,
        "sliding_window",
        None,
        "summarizing",
        "sliding_window_no_first",
        "summarizing_no_first",
    )
    plans: list[ConversationPlan] = []
    for index in range(count):
        title, prompt, subject, answer = _TOPICS[rng.randrange(len(_TOPICS))]
        n = rng.randrange(100, 9999)
        runs = max(rng.randint(min_runs, max_runs), 2 if index == 2 else 1)
        turns: list[Turn] = []
        for run in range(runs):
            steps = _steps(f"{subject} {n}", rng.randint(0, 5), offset=run * 5)
            if index == 1 and run == 0:
                # A deploy cancelled mid-call: an interrupted snapshot and a `started` tool effect.
                steps = (*steps[:2], ToolStep("deploy", f"{subject} {n}", "", fails=True))
            text = prompt.format(n=n) if run == 0 else rng.choice(_FOLLOW_UPS)
            turns.append(Turn(text, steps, answer.format(n=n), inject_orphan_result=index == 2 and run == 1))
        plans.append(
            ConversationPlan(
                name=f"generated-{index}",
                title=f"{title} {n}",
                turns=tuple(turns),
                compaction=kinds[index % len(kinds)],
                tenant=tenants[index % len(tenants)],
                agent_name=("support_agent", "ops_agent", "billing_agent")[index % 3],
                started_at=datetime(2026, 1, 5, 9, 0, tzinfo=UTC) + timedelta(hours=7 * index),
            )
        )
    return plans


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


def demo_payloads(count: int = 50, *, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """About 50 generated conversations as API payloads per tenant slug (`acme`, `globex`), write order."""
    by_tenant: dict[str, list[dict[str, Any]]] = {}
    for index, plan in enumerate(generate_conversations(count, seed=seed)):
        store = InMemoryStepStore()
        conversation_id = f"demo-{seed}-{index:03d}"
        run_plan(plan, store, conversation_id=conversation_id, with_truth=False)
        by_tenant.setdefault(plan.tenant, []).extend(store_as_payloads(store))
    return by_tenant


def threaded_payloads(runs: int = 1000, *, runs_per_conversation: int = 5, seed: int = 0) -> list[dict[str, Any]]:
    """Payloads of `runs` runs threaded through `message_history`, for ingest benchmarks (one tenant)."""
    conversations = max(1, runs // runs_per_conversation)
    plans = generate_conversations(
        conversations, seed=seed, min_runs=runs_per_conversation, max_runs=runs_per_conversation
    )
    payloads: list[dict[str, Any]] = []
    for index, plan in enumerate(plans):
        store = InMemoryStepStore()
        run_plan(plan, store, conversation_id=f"bench-{seed}-{index:04d}", with_truth=False)
        payloads.extend(store_as_payloads(store))
    return payloads
