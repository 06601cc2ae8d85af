"""Histories for the replay-audit tests, produced by real pydantic-ai Agents driven by FunctionModel.

Each tool argument and result carries a marker string (ARGUMENT_MARKERS, RESULT_MARKERS) so tests can prove
no audit record ever holds them.
"""

import asyncio
from dataclasses import replace

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai_harness.step_persistence import InMemoryStepStore, StepPersistence

from sessions_app.audit.vocabulary import ContractKind, Evidence

SYSTEM_PROMPT = "You are the Acme billing mailer. Never email anyone outside the customer's domain."
RECIPIENT = "dana.kowalczyk@customer-example.org"
INVOICE_BODY = "Invoice INV-88213 for 4,200 EUR is attached"
MAIL_RESULT = "accepted: queued as msg-7781-zeta"
CARD_AMOUNT = 987654
ARGUMENT_MARKERS = (RECIPIENT, INVOICE_BODY, "INV-88213", str(CARD_AMOUNT))
RESULT_MARKERS = (MAIL_RESULT, "msg-7781-zeta")

MAIL_CALL_ID = "call-mail-1"
CARD_CALL_ID = "call-card-1"


def _mail_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    answered = any(
        getattr(part, "tool_call_id", None) == MAIL_CALL_ID and part.part_kind == "tool-return"
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
    )
    if answered:
        return ModelResponse(parts=[TextPart("The invoice email is sent.")])
    return ModelResponse(
        parts=[ToolCallPart("send_email", {"to": RECIPIENT, "body": INVOICE_BODY}, tool_call_id=MAIL_CALL_ID)]
    )


def mailer_agent(system_prompt: str | None = SYSTEM_PROMPT) -> Agent:
    agent = Agent(FunctionModel(_mail_model), system_prompt=system_prompt or (), name="mailer")

    @agent.tool_plain
    def send_email(to: str, body: str) -> str:
        return MAIL_RESULT

    return agent


def mailer_history(
    conversation_id: str = "conv-a", prompt: str = "Send the March invoice"
) -> list[ModelMessage]:
    """A complete run: system prompt, user prompt, a tool call, its result and a final answer."""
    return mailer_agent().run_sync(prompt, conversation_id=conversation_id).all_messages()


def history_without_system_prompt(conversation_id: str = "conv-a") -> list[ModelMessage]:
    """A complete run whose system prompt a storage layer or front end dropped."""
    stripped: list[ModelMessage] = []
    for message in mailer_history(conversation_id):
        if isinstance(message, ModelRequest):
            message = replace(
                message, parts=[p for p in message.parts if not isinstance(p, SystemPromptPart)]
            )
        stripped.append(message)
    return stripped


def history_with_orphan_result(conversation_id: str = "conv-a") -> list[ModelMessage]:
    """A complete run after context eviction dropped the response that made the tool call."""
    messages = mailer_history(conversation_id)
    return [
        m
        for m in messages
        if not (isinstance(m, ModelResponse) and any(isinstance(p, ToolCallPart) for p in m.parts))
    ]


def mixed_conversation_history(first: str = "conv-a", second: str = "conv-b") -> list[ModelMessage]:
    """A second run fed the first run's history but filed under another conversation id."""
    earlier = mailer_history(first)
    return (
        mailer_agent()
        .run_sync("And the April one", message_history=earlier, conversation_id=second)
        .all_messages()
    )


def _card_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(
        parts=[ToolCallPart("charge_card", {"amount_cents": CARD_AMOUNT}, tool_call_id=CARD_CALL_ID)]
    )


def interrupted_history(conversation_id: str = "conv-a") -> list[ModelMessage]:
    """The harness's `interrupted` snapshot of a run whose tool call crashed mid-flight."""
    store = InMemoryStepStore()
    agent = Agent(
        FunctionModel(_card_model),
        system_prompt=SYSTEM_PROMPT,
        name="mailer",
        capabilities=[StepPersistence(store=store, agent_name="mailer")],
    )

    @agent.tool_plain
    def charge_card(amount_cents: int) -> str:
        raise ConnectionError("payment gateway connection dropped")

    async def crash_and_read() -> list[ModelMessage]:
        try:
            await agent.run("Charge the card on file", conversation_id=conversation_id)
        except ConnectionError:
            pass
        (run,) = await store.list_runs()
        snapshot = await store.latest_snapshot(run_id=run.run_id, include_interrupted=True)
        assert snapshot is not None and snapshot.state == "interrupted"
        return snapshot.messages

    return asyncio.run(crash_and_read())


def context_for(messages: list[ModelMessage], **overrides):
    """An AuditContext for `messages` that passes every gate unless `overrides` say otherwise."""
    from datetime import UTC, datetime

    from sessions_app.audit import gates
    from sessions_app.audit.digests import prompt_sha256

    conversation_id = next((m.conversation_id for m in reversed(messages) if m.conversation_id), "conv-a")
    values = {
        "run_id": "run-1",
        "conversation_id": conversation_id,
        "now": datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
        "stored_messages": gates.stored_form(messages),
        "agent_name": "mailer",
        "owned_conversation_ids": frozenset({conversation_id}),
        "prompt_contract": gates.PromptContractFact(ContractKind.HASH, prompt_sha256(SYSTEM_PROMPT)),
        "receipts": (gates.ReceiptFact("invoice-email-sent", Evidence.OUTCOME),),
    }
    values.update(overrides)
    return gates.AuditContext(**values)


def ingest(
    tenant,
    messages: list[ModelMessage],
    *,
    run_id: str,
    conversation_id: str,
    state: str = "complete",
    source: str = "server",
    agent: str = "mailer",
    parent_run_id: str = "",
    tool_effects=(),
    principal: str = "",
    api_key=None,
):
    """Store one snapshot through the real ingestion service (which audits the run) and return the Run."""
    from sessions_app.ingest.payloads import SnapshotPayload
    from sessions_app.ingest.service import ingest_snapshots
    from sessions_app.models import Run

    payload = SnapshotPayload(
        conversation_id=conversation_id,
        run_id=run_id,
        agent=agent,
        state=state,
        messages=messages,
        parent_run_id=parent_run_id,
        principal=principal,
    )
    ingest_snapshots(tenant, [payload], source=source, via="api", tool_effects=tool_effects, api_key=api_key)
    return Run.objects.select_related("conversation", "tenant").get(tenant=tenant, run_id=run_id)


def outcome_receipt(run_id: str, effect: str = "invoice-email-sent") -> dict:
    return {
        "run_id": run_id,
        "effect": effect,
        "evidence": "outcome",
        "checked_by": "mailbox-reader",
        "reference": "sha256:5f1c0e",
    }
