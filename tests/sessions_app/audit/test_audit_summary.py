"""The audit of a history extended from the summary of its prefix (`gates.summarize`) gives exactly the report of
the six gates run from scratch over the whole history: after every snapshot of every scenario, of 300 generated
stress conversations (forks, cancelled tools, orphan results, compaction), and of random histories that reuse
call ids, answer calls late, early or twice, and carry earlier repairs; each under contexts that change what
the gates say (prompt contracts, pending approvals, unfinished ledger calls)."""

import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import (
    SYNTHESIZED_TOOL_RETURN_METADATA_KEY,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai_harness.step_persistence import InMemoryStepStore

from sessions_app.audit import gates
from sessions_app.audit.digests import prompt_sha256
from sessions_app.audit.gates.round_trip import CLEAN
from sessions_app.audit.gates.summary import EMPTY, HistorySummary, extends, summarize
from sessions_app.audit.summaries import Summaries, summary_of
from sessions_app.transcripts.recovery.fold import run_order
from tests.agents import weather_agent
from tests.scenarios import SCENARIO_NAMES, new_store, run_plan, run_scenario, runs_from_store, stress_plan

NOW = datetime(2026, 12, 6, tzinfo=UTC)


def contexts(messages: list[ModelMessage], stored: tuple[str, ...]) -> list[gates.AuditContext]:
    """A plain context and ones that make each context-dependent check speak."""
    parts = [part for message in messages for part in message.parts]
    calls = sorted({part.tool_call_id for part in parts if isinstance(part, ToolCallPart)})
    prompts = [part.content for part in parts if isinstance(part, SystemPromptPart)]
    base = gates.AuditContext(run_id="r", conversation_id="c", now=NOW, stored_messages=stored)
    return [
        base,
        replace(
            base,
            pending_approvals=frozenset(calls[:2]),
            unfinished_effects={call: "deploy" for call in calls[-2:]} | {"never-called": "lookup"},
            tool_effects={call: "started" for call in calls[::2]},
            merged_conversation_ids=frozenset({"other"}),
            prompt_contract=gates.PromptContractFact("hash", prompt_sha256(prompts[0]) if prompts else "0" * 64),
        ),
        replace(base, prompt_contract=gates.PromptContractFact("label", "stock")),
        replace(base, prompt_contract=gates.PromptContractFact("dynamic")),
    ]


def assert_same_reports(summary: HistorySummary, messages: list[ModelMessage], stored: tuple[str, ...]) -> None:
    for ctx in contexts(messages, stored):
        assert gates.run_gates_on_summary(ctx, summary) == gates.run_gates(ctx, messages)


def assert_extension_audits_alike(histories: list[list[ModelMessage]]) -> int:
    """Audit each history in turn, extended from the kept summary of its prefix; returns how many were."""
    kept = Summaries()
    extended = 0
    for messages in histories:
        stored = gates.stored_form(messages)
        before = kept.find("conversation", stored, messages)
        summary = summary_of("conversation", stored, messages, kept)
        extended += before is not None and len(before.stored) > 0
        assert_same_reports(summary, messages, stored)
        scratch = summarize(stored, messages)
        assert (summary.pairing.orphans, summary.pairing.closed) == (scratch.pairing.orphans, scratch.pairing.closed)
    return extended


def snapshot_histories(runs) -> list[list[ModelMessage]]:
    return [list(s.messages) for run in sorted(runs, key=run_order) for s in sorted(run.snapshots, key=lambda s: s.seq)]


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_scenario(name):
    store = new_store(name)
    run_scenario(name, store, conversation_id=f"conv-{name}")
    assert_extension_audits_alike(snapshot_histories(runs_from_store(store)))


@pytest.mark.parametrize("block", range(10))
def test_stress_conversations(block):
    extended = 0
    for seed in range(block * 30, block * 30 + 30):
        store = InMemoryStepStore()
        run_plan(stress_plan(seed), store, conversation_id=f"stress-{seed}", with_truth=False)
        extended += assert_extension_audits_alike(snapshot_histories(runs_from_store(store)))
    assert extended > 30


def random_history(rng: random.Random, length: int) -> list[ModelMessage]:
    """Requests and responses whose tool results pair with calls in every way the repair distinguishes."""
    messages: list[ModelMessage] = []
    ids = [f"call-{n}" for n in range(6)]
    for index in range(length):
        if rng.random() < 0.5:
            parts: list = [
                ToolCallPart("deploy", {"n": index}, tool_call_id=rng.choice(ids)) for _ in range(rng.randint(0, 2))
            ]
            if rng.random() < 0.3 or not parts:
                parts.append(TextPart(f"answer {index}"))
            messages.append(ModelResponse(parts=parts, timestamp=NOW))
        else:
            request_parts: list = []
            for _ in range(rng.randint(0, 2)):
                call = rng.choice(ids)
                kind = rng.random()
                if kind < 0.6:
                    request_parts.append(ToolReturnPart("deploy", "ok", tool_call_id=call, timestamp=NOW))
                elif kind < 0.75:
                    request_parts.append(RetryPromptPart("again", tool_name="deploy", tool_call_id=call, timestamp=NOW))
                else:
                    request_parts.append(
                        ToolReturnPart(
                            "deploy",
                            "Tool call was interrupted.",
                            tool_call_id=call,
                            metadata={SYNTHESIZED_TOOL_RETURN_METADATA_KEY: True},
                            timestamp=NOW,
                        )
                    )
            if rng.random() < 0.5 or not request_parts:
                request_parts.append(UserPromptPart(f"question {index}", timestamp=NOW))
            if index == 0:
                request_parts.insert(0, SystemPromptPart("You check stock."))
            instructions = "Check stock." if rng.random() < 0.5 else None
            messages.append(ModelRequest(parts=request_parts, instructions=instructions))
    return messages


@pytest.mark.parametrize("block", range(4))
def test_random_pairings(block):
    """Each random history audited as it grows by 1 to 4 messages at a time."""
    for seed in range(block * 100, block * 100 + 100):
        rng = random.Random(seed)
        whole = random_history(rng, rng.randint(1, 40))
        ends, end = [], 0
        while end < len(whole):
            end = min(len(whole), end + rng.randint(1, 4))
            ends.append(end)
        assert_extension_audits_alike([whole[:end] for end in ends])


def threaded_histories(runs: int) -> list[list[ModelMessage]]:
    """A real agent threaded through `message_history`: each run's whole history, as OTLP and POSTs send it."""
    agent, history = weather_agent(), None
    histories = []
    for n in range(runs):
        history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
        histories.append(history)
    return histories


def test_a_thread_is_audited_from_its_prefix():
    """Every run after the first goes on from the summary of the run before, and repairs only its tail."""
    histories = threaded_histories(30)
    assert assert_extension_audits_alike(histories) == len(histories) - 1
    kept = Summaries()
    for messages in histories:
        summary = summary_of("c", gates.stored_form(messages), messages, kept)
        assert len(summary.pairing.tail) <= 2
    assert summary.messages == len(histories[-1]) == 30 * 4


def test_extends_only_its_own_prefix():
    first, last = threaded_histories(3)[::2]
    summary = summarize(gates.stored_form(first), first)
    assert extends(summary, gates.stored_form(last), last)
    changed = [replace(first[0], instructions="changed"), *last[1:]]
    assert not extends(summary, gates.stored_form(changed), changed)
    assert not extends(summary, (), [])
    assert extends(EMPTY, (), [])


def test_a_round_trip_problem_is_never_extended():
    messages = random_history(random.Random(1), 6)
    stored = (*gates.stored_form(messages)[:-1], "not json")
    CLEAN.clear()
    summary = summarize(stored, messages[:-1])
    assert not summary.reusable
    assert summary.problems and summary.problems[0][0] == len(stored) - 1
    kept = Summaries()
    kept.keep("c", summary)
    assert kept.find("c", (*stored, "more"), messages) is None
