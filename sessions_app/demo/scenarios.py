"""Real pydantic-ai agent runs that write pydantic-ai-harness step snapshots: what `seed_demo` records.

Every conversation drives a real `Agent` through pydantic-ai's `FunctionModel` (no network) with the harness's
`StepPersistence` writing into the store you pass (`InMemoryStepStore`, `SqliteStepStore`, ...), plus the
harness's `SlidingWindowCompaction` or `SummarizingCompaction` where the plan compacts.

Runs are deterministic: the model follows a script, tool results come from the script, usage is reported
explicitly, and pydantic-ai's clock is held to a scripted time while a plan runs, so the demo shows
conversations spread over days with steps seconds apart (and tests can run a plan twice byte for byte).

    store = InMemoryStepStore()
    recorded = record_plan(plan, store, conversation_id="conv-1")
    payloads = store_as_payloads(store)              # POST /api/v1/snapshots bodies, in write order

`generate_conversations(count, seed=...)` gives varied `ConversationPlan`s (topics in several languages, tool
calls, compaction on some, an interrupted tool call, an orphan tool result); `demo_payloads()` records about 50
of them over two tenants as API payloads. Named scenarios, the uncompacted twin that recovery tests compare
with, and stress plans are test code (tests/scenarios.py).

This module imports pydantic-ai-harness, an optional dependency (the `harness` extra); the product does not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

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
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from pydantic_ai_harness.compaction import SlidingWindowCompaction, SummarizingCompaction
from pydantic_ai_harness.step_persistence import InMemoryStepStore, StepPersistence

from sessions_app.demo.plans import ConversationPlan, ToolStep, Turn, demo_start, generate_conversations

# --- deterministic clock ---------------------------------------------------------------------------------


class _ScriptedClock:
    now_value: datetime = datetime(2026, 1, 1, tzinfo=UTC)

    @classmethod
    def now(cls, tz: Any = None) -> datetime:
        return cls.now_value


@contextmanager
def _scripted_clock() -> Iterator[type[_ScriptedClock]]:
    # Why patch a private name: pydantic-ai stamps every part with `pydantic_ai._utils.now_utc()`, which reads
    # the module's `datetime` at call time, and offers no public clock. Without holding it, demo conversations
    # would all be stamped with the seconds `seed_demo` ran in, and a recorded plan could not be repeated
    # byte for byte. Only demo and test code ever enter this context; the product never does.
    original = pydantic_ai_utils.datetime  # type: ignore[attr-defined]  # a private module: no re-export list
    pydantic_ai_utils.datetime = _ScriptedClock  # type: ignore[attr-defined,assignment]  # a stand-in class for the module name
    try:
        yield _ScriptedClock
    finally:
        pydantic_ai_utils.datetime = original  # type: ignore[attr-defined]  # restoring the module name


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
    contents = (getattr(part, "content", None) for m in messages for part in m.parts)
    prompt = "".join(content for content in contents if isinstance(content, str))
    calls = prompt.count("Tool Call") or prompt.count("tool_call") or 1
    text = f"Summary: the user asked for help; the agent made about {calls} tool calls and reported results."
    return ModelResponse(parts=[TextPart(text)], usage=RequestUsage(input_tokens=200, output_tokens=30))


def _compaction(plan: ConversationPlan) -> list[Any]:
    kind = plan.compaction
    if kind is None:
        return []
    limits = plan.max_messages, plan.keep_messages
    if kind == "sliding_window":
        return [SlidingWindowCompaction(max_messages=limits[0], keep_messages=limits[1])]
    if kind == "sliding_window_no_first":
        return [
            SlidingWindowCompaction(
                max_messages=limits[0], keep_messages=limits[1], preserve_first_user_message=False, receipts=True
            )
        ]
    summarizer = FunctionModel(_summarize, model_name="scenario-summarizer")
    if kind == "summarizing":
        return [SummarizingCompaction(model=summarizer, max_messages=limits[0], keep_messages=limits[1])]
    return [
        SummarizingCompaction(
            model=summarizer,
            max_messages=limits[0],
            keep_messages=limits[1],
            preserve_first_user_message=False,
            receipts=True,
            incremental=False,
        )
    ]


def _agent(plan: ConversationPlan, script: _RunScript, persistence: StepPersistence, compact: bool) -> Agent[None, str]:
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
        agent.tool(name=name, description=f"The {name} tool.")(use_tool)
    return agent


def _orphan_result(call_prefix: str) -> ModelRequest:
    return ModelRequest(
        parts=[ToolReturnPart("lookup", "stale result from a retried worker", tool_call_id=f"{call_prefix}-orphan")]
    )


@dataclass
class RecordedRuns:
    """What recording a plan did: run ids in start order, which were interrupted, the history each run got."""

    run_ids: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)
    histories: dict[str, list[ModelMessage]] = field(default_factory=dict)  # message_history each run got


async def _record(plan: ConversationPlan, store: Any, conversation_id: str, compact: bool) -> RecordedRuns:
    """Run every turn into `store`."""
    outcome = RecordedRuns()
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


def record_plan(plan: ConversationPlan, store: Any, *, conversation_id: str, compaction: bool = True) -> RecordedRuns:
    """Run `plan` into `store`, with its compaction unless `compaction=False`, under the scripted clock."""
    with _scripted_clock():
        return asyncio.run(_record(plan, store, conversation_id, compaction and plan.compaction is not None))


# --- reading a harness store -----------------------------------------------------------------------------


async def store_runs(store: Any, conversation_id: str | None) -> list[tuple[Any, list[Any]]]:
    runs = await store.list_runs(conversation_id=conversation_id)
    out = []
    for run in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        out.append((run, await store.list_snapshots(run_id=run.run_id, include_interrupted=True)))
    return out


def store_as_payloads(store: Any, conversation_id: str | None = None) -> list[dict[str, Any]]:
    """API-shaped snapshot payloads (POST /api/v1/snapshots bodies) in write order."""
    payloads: list[dict[str, Any]] = []
    for run, snapshots in asyncio.run(store_runs(store, conversation_id)):
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


def demo_payloads(count: int = 50, *, seed: int = 0, today: date | None = None) -> dict[str, list[dict[str, Any]]]:
    """About 50 generated conversations as API payloads per tenant slug (`acme`, `globex`), write order; their
    runs end the day before `today` (the current UTC date unless given), so the overview shows them by default."""
    start = demo_start(today or datetime.now(UTC).date(), count)
    by_tenant: dict[str, list[dict[str, Any]]] = {}
    for index, plan in enumerate(generate_conversations(count, seed=seed, start=start)):
        store = InMemoryStepStore()
        conversation_id = f"demo-{seed}-{index:03d}"
        record_plan(plan, store, conversation_id=conversation_id)
        by_tenant.setdefault(plan.tenant, []).extend(store_as_payloads(store))
    return by_tenant
