"""Gate 3, prompt continuity: the history carries the agent's prompt contract. Pure."""

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest, SystemPromptPart

from sessions_app.audit.digests import prompt_sha256, sha256_hex
from sessions_app.audit.gates.context import PROMPT_CONTINUITY, AuditContext, Finding
from sessions_app.audit.vocabulary import ContractKind, Verdict


def _system_prompts(messages: Sequence[ModelMessage]) -> list[SystemPromptPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, SystemPromptPart)
    ]


def _instructions(messages: Sequence[ModelMessage]) -> list[str]:
    return [m.instructions for m in messages if isinstance(m, ModelRequest) and m.instructions]


def _prompt_hashes(messages: Sequence[ModelMessage]) -> set[str]:
    """Every hash a prompt contract may name: each system prompt, each request's system prompts together,
    and each recorded instructions text."""
    hashes = {prompt_sha256(part.content) for part in _system_prompts(messages)}
    for message in messages:
        if isinstance(message, ModelRequest):
            joined = [part.content for part in message.parts if isinstance(part, SystemPromptPart)]
            if joined:
                hashes.add(prompt_sha256("\n\n".join(joined)))
    hashes.update(prompt_sha256(text) for text in _instructions(messages))
    return hashes


def _prompt_gap(ctx: AuditContext, reason: str, contract_key: str) -> Finding:
    return Finding(
        gate=PROMPT_CONTINUITY,
        code=Verdict.SYSTEM_PROMPT_GAP,
        key=f"prompt_gap:{contract_key}",
        detail=reason,
    )


def check_prompt_continuity(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 3: the history carries the agent's prompt contract (hash, label or dynamic instructions)."""
    if not messages:
        return []
    agent = f"agent '{ctx.agent_name}'" if ctx.agent_name else "this run's agent"
    prompts = _system_prompts(messages)
    instructions = _instructions(messages)
    contract = ctx.prompt_contract
    if contract is None:
        if prompts or instructions:
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
        if instructions:
            return []
        reason = (
            f"{agent.capitalize()} is declared to run on dynamic instructions, "
            "but no request in the history recorded any."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    if contract.kind == ContractKind.HASH:
        if contract.value in _prompt_hashes(messages):
            return []
        carried = f"{len(prompts)} system prompt part(s)" if prompts else "no system prompt"
        reason = (
            f"The history carries {carried} and none matches the prompt hash registered for {agent} "
            f"({contract.value[:12]}…)."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    if contract.kind == ContractKind.LABEL:
        texts = [part.content for part in prompts] + instructions
        if any(part.dynamic_ref == contract.value for part in prompts) or any(
            contract.value in t for t in texts
        ):
            return []
        carried = f"{len(prompts)} system prompt part(s)" if prompts else "no system prompt"
        reason = (
            f"The history carries {carried} and none carries the prompt label '{contract.value}' of {agent}."
        )
        return [_prompt_gap(ctx, reason, contract_key)]
    raise ValueError(f"Unknown prompt contract kind {contract.kind!r}")
