"""The six replay gates of SPEC section 3, as pure functions over pydantic-ai messages and a plain context.

One module per gate, in the order SPEC section 3 numbers them; `context` holds what they share. Every gate runs
on every audit and every finding is kept; `vocabulary.decide_verdict` picks the one to show.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ModelMessage

from sessions_app.audit.gates.authority import check_authority
from sessions_app.audit.gates.context import (
    AUTHORITY,
    CLIENT,
    CONVERSATION_SCOPE,
    OUTCOME_RECEIPT,
    PROMPT_CONTINUITY,
    ROUND_TRIP,
    TOOL_PAIRING,
    AuditContext,
    Finding,
    PromptContractFact,
    ReceiptFact,
    WaitFact,
    load_history,
    stored_form,
)
from sessions_app.audit.gates.conversation_scope import check_conversation_scope, short_principal
from sessions_app.audit.gates.outcome_receipt import check_outcome_receipt
from sessions_app.audit.gates.prompt_continuity import check_prompt_continuity
from sessions_app.audit.gates.round_trip import check_round_trip
from sessions_app.audit.gates.summary import HistorySummary, summarize, summary_findings
from sessions_app.audit.gates.tool_pairing import check_tool_pairing, merge_adjacent_requests
from sessions_app.audit.vocabulary import Verdict, decide_verdict, verdict_rank

__all__ = [
    "AUTHORITY",
    "CLIENT",
    "CONVERSATION_SCOPE",
    "GATE_FUNCTIONS",
    "OUTCOME_RECEIPT",
    "PROMPT_CONTINUITY",
    "ROUND_TRIP",
    "TOOL_PAIRING",
    "AuditContext",
    "Finding",
    "Gate",
    "GateReport",
    "HistorySummary",
    "PromptContractFact",
    "ReceiptFact",
    "WaitFact",
    "check_authority",
    "check_conversation_scope",
    "check_outcome_receipt",
    "check_prompt_continuity",
    "check_round_trip",
    "check_tool_pairing",
    "load_history",
    "merge_adjacent_requests",
    "run_gates",
    "short_principal",
    "run_gates_on_summary",
    "stored_form",
    "summarize",
]

Gate = Callable[[Sequence[ModelMessage], AuditContext], list[Finding]]

GATE_FUNCTIONS: tuple[Gate, ...] = (
    check_round_trip,
    check_authority,
    check_prompt_continuity,
    check_tool_pairing,
    check_conversation_scope,
    check_outcome_receipt,
)


@dataclass(frozen=True)
class GateReport:
    verdict: Verdict
    findings: tuple[Finding, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "findings": [f.as_dict() for f in self.findings]}


def run_gates(ctx: AuditContext, messages: Sequence[ModelMessage] | None = None) -> GateReport:
    """Run all six gates over the stored history in `ctx`; keep every finding, graver ones first.

    `messages` may pass in `load_history(ctx.stored_messages)` when the caller already loaded it.
    """
    if messages is None:
        messages = load_history(ctx.stored_messages)
    return _report([finding for gate in GATE_FUNCTIONS for finding in gate(messages, ctx)])


def run_gates_on_summary(ctx: AuditContext, summary: HistorySummary) -> GateReport:
    """`run_gates` on the history `summary` summarizes (`summarize`): the same report, without reading the
    history's messages again."""
    return _report(summary_findings(summary, ctx))


def _report(findings: list[Finding]) -> GateReport:
    findings.sort(key=lambda f: verdict_rank(f.code))
    return GateReport(verdict=decide_verdict(f.code for f in findings), findings=tuple(findings))
