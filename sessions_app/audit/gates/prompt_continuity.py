"""Gate 3, prompt continuity: the history carries the agent's prompt contract. Pure."""

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart

from sessions_app.audit.digests import prompt_sha256, sha256_hex
from sessions_app.audit.gates.context import PROMPT_CONTINUITY, AuditContext, Finding
from sessions_app.audit.vocabulary import ContractKind, Verdict


@dataclass(frozen=True)
class PromptFacts:
    """What gate 3 reads from a history: its system prompt parts (how many, their dynamic refs), whether any
    request recorded instructions, the texts (system prompts and instructions) and every hash a contract may
    name (each system prompt, each request's system prompts joined, each instructions text)."""

    messages: int = 0
    prompts: int = 0
    has_instructions: bool = False
    dynamic_refs: frozenset[str | None] = frozenset()
    texts: frozenset[str] = frozenset()
    hashes: frozenset[str] = frozenset()


def prompt_facts(messages: Sequence[ModelMessage], before: PromptFacts = PromptFacts()) -> PromptFacts:
    """`before` (the facts of the history's prefix) extended by `messages`."""
    prompts, has_instructions = before.prompts, before.has_instructions
    refs: set[str | None] = set()
    texts: set[str] = set()
    joined_texts: set[str] = set()
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        joined = [part.content for part in message.parts if isinstance(part, SystemPromptPart)]
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                prompts += 1
                refs.add(part.dynamic_ref)
        texts.update(joined)
        if joined:
            joined_texts.add("\n\n".join(joined))
        if message.instructions:
            has_instructions = True
            texts.add(message.instructions)
    new_texts = texts - before.texts
    return PromptFacts(
        messages=before.messages + len(messages),
        prompts=prompts,
        has_instructions=has_instructions,
        dynamic_refs=before.dynamic_refs | refs if refs - before.dynamic_refs else before.dynamic_refs,
        texts=before.texts | new_texts if new_texts else before.texts,
        hashes=before.hashes | {prompt_sha256(text) for text in new_texts | joined_texts},
    )


def _prompt_gap(ctx: AuditContext, reason: str, contract_key: str) -> Finding:
    return Finding(
        gate=PROMPT_CONTINUITY,
        code=Verdict.SYSTEM_PROMPT_GAP,
        key=f"prompt_gap:{contract_key}",
        detail=reason,
    )


def check_prompt_continuity(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 3: the history carries the agent's prompt contract (hash, label or dynamic instructions)."""
    return prompt_findings(prompt_facts(messages), ctx)


def prompt_findings(facts: PromptFacts, ctx: AuditContext) -> list[Finding]:
    """Gate 3 from the history's `PromptFacts`."""
    if not facts.messages:
        return []
    agent = f"agent '{ctx.agent_name}'" if ctx.agent_name else "this run's agent"
    contract = ctx.prompt_contract
    carried = f"{facts.prompts} system prompt part(s)" if facts.prompts else "no system prompt"
    if contract is None:
        if facts.prompts or facts.has_instructions:
            return []
        return [
            _prompt_gap(
                ctx,
                f"The history carries no system prompt and no instructions, and no prompt contract is "
                f"registered for {agent}.",
                "none",
            )
        ]
    contract_key = sha256_hex(f"{contract.kind}:{contract.value}")[:16]
    if contract.kind == ContractKind.DYNAMIC:
        # The agent regenerates dynamic instructions on every run, so the history need not carry a system
        # prompt; what it must show is that the agent really ran on instructions.
        if facts.has_instructions:
            return []
        reason = (
            f"{agent.capitalize()} is declared to run on dynamic instructions, "
            "but no request in the history recorded any."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    if contract.kind == ContractKind.HASH:
        if contract.value in facts.hashes:
            return []
        reason = (
            f"The history carries {carried} and none matches the prompt hash registered for {agent} "
            f"({contract.value[:12]}…)."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    if contract.kind == ContractKind.LABEL:
        if contract.value in facts.dynamic_refs or any(contract.value in t for t in facts.texts):
            return []
        reason = (
            f"The history carries {carried} and none carries the prompt label '{contract.value}' of {agent}."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    raise ValueError(f"Unknown prompt contract kind {contract.kind!r}")
