"""Demo conversation plans: plain data saying what each scripted agent run asks, calls and answers. Pure.

`generate_conversations(count, seed=...)` gives varied, reproducible plans (topics in several languages, tool
calls, compaction on some, an interrupted tool call, an orphan tool result); sessions_app.demo.scenarios
records them with real agents.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

DEMO_SYSTEM_PROMPT = "You are a careful support agent. Use the tools; quote exact values."

CompactionKind = Literal["sliding_window", "sliding_window_no_first", "summarizing", "summarizing_no_first"]


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
    system_prompt: str = DEMO_SYSTEM_PROMPT
    agent_name: str = "support_agent"
    compaction: CompactionKind | None = None
    max_messages: int = 6
    keep_messages: int = 3
    max_snapshots_per_run: int | None = None
    tenant: str = "acme"
    title: str = ""
    started_at: datetime = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # DEMO_EPOCH, declared below
    step_seconds: int = 7  # scripted clock advance per model call; 0 keeps repeated exchanges identical


def tool_steps(topic: str, count: int, offset: int = 0) -> tuple[ToolStep, ...]:
    tools = ("lookup", "search_docs", "run_query", "read_file")
    return tuple(
        ToolStep(
            tools[(i + offset) % len(tools)],
            f"{topic} item {i + offset + 1}",
            f"{topic} record {i + offset + 1}: status ok, value {(i + offset + 1) * 37}",
        )
        for i in range(count)
    )


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


# Where generated plans start unless told: a fixed instant, so plans from one seed are equal wherever they run.
DEMO_EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
GENERATED_SPACING = timedelta(hours=7)  # between the starts of consecutive generated conversations


def demo_start(today: date, count: int) -> datetime:
    """Where a demo of `count` generated conversations starts so its last one begins a day before `today`: the
    whole demo then lies in the overview's default window (the last 30 days, for count <= 96), whatever today is.
    Fixed dates made a fresh demo show an empty overview (B1)."""
    first_day = datetime(today.year, today.month, today.day, 9, 0, tzinfo=UTC) - timedelta(days=1)
    return first_day - GENERATED_SPACING * max(count - 1, 0)


def generate_conversations(
    count: int,
    *,
    seed: int = 0,
    tenants: Sequence[str] = ("acme", "globex"),
    min_runs: int = 1,
    max_runs: int = 4,
    start: datetime = DEMO_EPOCH,
) -> list[ConversationPlan]:
    """`count` varied, reproducible conversation plans spread over `tenants`, one every 7 hours from `start`.

    Topics in English, German/French, Vietnamese and Chinese; 0 to 5 tool calls a run; compaction on about
    half; the first plans include an interrupted tool call, an orphan tool result and leaked credentials.
    """
    rng = random.Random(seed)  # noqa: S311  # demo data must be reproducible from a seed, not unpredictable
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
            steps = tool_steps(f"{subject} {n}", rng.randint(0, 5), offset=run * 5)
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
                started_at=start + GENERATED_SPACING * index,
            )
        )
    return plans
