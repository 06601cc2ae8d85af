"""Gate 4, honest tool pairing: what pydantic-ai's own repair drops and synthesizes. Pure."""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeGuard

from pydantic_ai.messages import (
    SYNTHESIZED_TOOL_RETURN_METADATA_KEY,
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    ToolReturnPart,
    repair_messages,
)

from sessions_app.audit.digests import hash_tool_call_id
from sessions_app.audit.gates.context import APPROVAL, TOOL_PAIRING, AuditContext, Finding
from sessions_app.audit.ledger import OUTCOME_UNKNOWN
from sessions_app.audit.vocabulary import Verdict


def _is_tool_result(part: object) -> TypeGuard[ToolReturnPart | RetryPromptPart]:
    if isinstance(part, ToolReturnPart):
        return True
    return isinstance(part, RetryPromptPart) and part.tool_name is not None


def _is_synthesized(part: object) -> TypeGuard[ToolReturnPart]:
    return isinstance(part, ToolReturnPart) and bool(
        (part.metadata or {}).get(SYNTHESIZED_TOOL_RETURN_METADATA_KEY)
    )


def _ledger_says(ctx: AuditContext, tool_call_id: str) -> str:
    if ctx.tool_effects is None:
        return "No tool-effect ledger was ingested for this run, so whether it started is unknown."
    status = ctx.tool_effects.get(tool_call_id)
    if status is None:
        return "The tool-effect ledger has no record of it: it never started, so it had no side effect."
    if status == "started":
        return "The tool-effect ledger shows it started and never finished: its side effect may exist."
    if status == "completed":
        return (
            "The tool-effect ledger shows it completed, but its result is missing: "
            "its side effect probably exists."
        )
    if status == "failed":
        return "The tool-effect ledger shows it failed; a partial side effect may exist."
    return f"The tool-effect ledger status is '{status}'."


def merge_adjacent_requests(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """Adjacent requests joined into one, part objects kept, in one pass.

    pydantic-ai's repair merges adjacent messages as its last step, in time quadratic in a run of requests
    (10,000 requests took 12 s). Joining them first leaves it nothing to merge, and cannot change what it
    drops or synthesizes: pairing looks at which results follow which response, and joining requests moves
    no part across a response (tests/sessions_app/audit/test_audit_repair_is_linear.py checks agreement).
    """
    merged: list[ModelMessage] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if isinstance(message, ModelRequest) and isinstance(previous, ModelRequest):
            merged[-1] = replace(previous, parts=[*previous.parts, *message.parts])
        else:
            merged.append(message)
    return merged


@dataclass(frozen=True, slots=True)
class PairingEvent:
    """One thing pydantic-ai's repair does to a history: drop an orphan result, or close a call out
    (`stored`: by a synthesized return an earlier repair stored in the history)."""

    tool_call_id: str
    tool_name: str
    stored: bool = False


def pairing_events(
    messages: Sequence[ModelMessage],
) -> tuple[tuple[PairingEvent, ...], tuple[PairingEvent, ...]]:
    """The orphans pydantic-ai's own `repair_messages` drops (in message order) and the calls it closes out (in
    the repaired history's order)."""
    repaired = repair_messages(merge_adjacent_requests(messages))
    # repair_messages keeps the part objects it does not drop, so identity tells kept from dropped.
    kept = {id(part) for message in repaired for part in message.parts}
    original = {id(part) for message in messages for part in message.parts}
    orphans = tuple(
        PairingEvent(part.tool_call_id, part.tool_name or "")
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if _is_tool_result(part) and id(part) not in kept
    )
    closed = tuple(
        PairingEvent(part.tool_call_id, part.tool_name, id(part) in original)
        for message in repaired
        for part in message.parts
        if _is_synthesized(part)
    )
    return orphans, closed


def answered_calls(messages: Sequence[ModelMessage]) -> frozenset[str]:
    """The calls the history really answers (a result or tool retry, not a synthesized return)."""
    return frozenset(
        part.tool_call_id
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if _is_tool_result(part) and not _is_synthesized(part)
    )


def check_tool_pairing(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 4: run pydantic-ai's own `repair_messages` and report what it drops and what it synthesizes.

    A repair makes a provider accept the request; it proves neither that the tool finished nor that its side
    effect did not happen. Returns an earlier repair synthesized, already stored in the history, count too.
    """
    orphans, closed = pairing_events(messages)
    return pairing_findings(orphans, closed, answered_calls(messages), ctx)


def pairing_findings(
    orphans: Sequence[PairingEvent], closed: Sequence[PairingEvent], answered: frozenset[str], ctx: AuditContext
) -> list[Finding]:
    """Gate 4's findings from what the repair did (`pairing_events`) and the calls the history answers."""
    findings: list[Finding] = []
    seen: set[str] = set()
    for event in orphans:
        call_hash = hash_tool_call_id(event.tool_call_id)
        key = f"orphan:{call_hash}"
        if key in seen:
            continue
        seen.add(key)
        findings.append(
            Finding(
                gate=TOOL_PAIRING,
                code=Verdict.ORPHAN_RESULT_REMOVED,
                key=key,
                detail=(
                    f"A result of tool '{event.tool_name}' answers a call that is not in the history; "
                    "pydantic-ai drops it before the next request."
                ),
                tool_call_hash=call_hash,
                tool_name=event.tool_name,
            )
        )
    for event in closed:
        call_hash = hash_tool_call_id(event.tool_call_id)
        key = f"interrupted:{call_hash}"
        if key in seen:
            continue
        seen.add(key)
        if event.tool_call_id in ctx.pending_approvals and not event.stored:
            findings.append(_awaiting_approval(event.tool_name, call_hash))
            continue
        how = (
            "was closed out by an earlier repair stored in the history"
            if event.stored
            else "has no result; pydantic-ai synthesizes an 'interrupted' return for it"
        )
        findings.append(
            Finding(
                gate=TOOL_PAIRING,
                code=Verdict.INTERRUPTED_TOOL,
                key=key,
                detail=f"A call of tool '{event.tool_name}' {how}. {_ledger_says(ctx, event.tool_call_id)}",
                tool_call_hash=call_hash,
                tool_name=event.tool_name,
            )
        )
    findings.extend(_unknown_outcomes(answered, ctx, seen))
    return findings


def _awaiting_approval(tool_name: str, call_hash: str) -> Finding:
    return Finding(
        gate=APPROVAL,
        code=Verdict.WAITING,
        key=f"approval:{call_hash}",
        detail=(
            f"A call of tool '{tool_name}' is awaiting approval: the run ended on DeferredToolRequests. The "
            "continuing run answers it (DeferredToolResults: approved or denied); do not replay this history "
            "without that answer, or pydantic-ai's repair closes the call as interrupted."
        ),
        tool_call_hash=call_hash,
        tool_name=tool_name,
    )


def _unknown_outcomes(answered: frozenset[str], ctx: AuditContext, seen: set[str]) -> list[Finding]:
    """Calls the ledger saw start and never end after the run stopped, that the history neither answers nor
    already reports as interrupted: the process died inside the tool, so its side effect may exist or not."""
    findings = []
    for tool_call_id, tool_name in sorted(ctx.unfinished_effects.items()):
        call_hash = hash_tool_call_id(tool_call_id)
        if tool_call_id in answered or f"interrupted:{call_hash}" in seen:
            continue
        findings.append(
            Finding(
                gate=TOOL_PAIRING,
                code=Verdict.INTERRUPTED_TOOL,
                key=f"unknown-outcome:{call_hash}",
                detail=(
                    f"The tool-effect ledger shows a call of tool '{tool_name}' started and never ended, and the "
                    f"run has stopped: {OUTCOME_UNKNOWN}. Its side effect may exist."
                ),
                tool_call_hash=call_hash,
                tool_name=tool_name,
            )
        )
    return findings
