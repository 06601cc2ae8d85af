"""Validation of receipts, waits and prompt contracts as they arrive (API or CLI). Pure: plain data in, a
frozen input or an `AuditInputError` naming the first problem out.

Every field is short and single-line on purpose: these records point at the world (a reference, a digest, a
label), they never copy content into the store.
"""

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sessions_app.audit import gates
from sessions_app.core.input_errors import RejectedInput

HEX_SHA256 = re.compile(r"[0-9a-f]{64}")


class AuditInputError(RejectedInput):
    """A receipt, wait, prompt contract or run reference we refuse."""


@dataclass(frozen=True)
class ReceiptInput:
    run_id: str
    effect: str
    evidence: str
    checked_by: str
    reference: str


@dataclass(frozen=True)
class WaitInput:
    run_id: str
    owner: str
    decision: str
    deadline: datetime
    resume_token: str | None


@dataclass(frozen=True)
class WaitResolutionInput:
    run_id: str
    resume_token: str


@dataclass(frozen=True)
class ContractInput:
    agent_name: str
    kind: str
    value: str


def _object(data: object, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise AuditInputError(f"A {what} must be a JSON object, got {type(data).__name__}.")
    return data


def _text(data: dict[str, Any], name: str, *, max_length: int, required: bool = True) -> str:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise AuditInputError(f"'{name}' is required.")
        return ""
    if not isinstance(value, str):
        raise AuditInputError(f"'{name}' must be a string, got {type(value).__name__}.")
    value = value.strip()
    if required and not value:
        raise AuditInputError(f"'{name}' is required.")
    if len(value) > max_length:
        raise AuditInputError(f"'{name}' is longer than {max_length} characters.")
    if "\n" in value or "\r" in value:
        raise AuditInputError(f"'{name}' must be a single line.")
    return value


def parse_receipt(data: object) -> ReceiptInput:
    body = _object(data, "receipt")
    evidence = _text(body, "evidence", max_length=16)
    if evidence not in gates.EVIDENCE_LEVELS:
        raise AuditInputError(
            f"'evidence' must be one of {', '.join(gates.EVIDENCE_LEVELS)}, got {evidence!r}."
        )
    return ReceiptInput(
        run_id=_text(body, "run_id", max_length=200),
        effect=_text(body, "effect", max_length=200),
        evidence=evidence,
        checked_by=_text(body, "checked_by", max_length=200),
        reference=_text(body, "reference", max_length=500, required=False),
    )


def parse_deadline(value: object) -> datetime:
    if not isinstance(value, str):
        raise AuditInputError("'deadline' must be an ISO 8601 date-time string with a time zone.")
    try:
        deadline = datetime.fromisoformat(value)
    except ValueError:
        raise AuditInputError(f"'deadline' is not an ISO 8601 date-time: {value[:40]!r}.") from None
    if deadline.tzinfo is None:
        raise AuditInputError("'deadline' needs a time zone (for example 2026-12-01T09:00:00+00:00).")
    return deadline


def parse_wait(data: object, *, now: datetime) -> WaitInput:
    body = _object(data, "wait")
    deadline = parse_deadline(body.get("deadline"))
    if deadline <= now:
        raise AuditInputError("'deadline' is in the past; a wait needs a deadline still ahead.")
    token = body.get("resume_token")
    if token is not None and (not isinstance(token, str) or not 16 <= len(token) <= 500):
        raise AuditInputError("'resume_token' must be a string of 16 to 500 characters (or omitted).")
    return WaitInput(
        run_id=_text(body, "run_id", max_length=200),
        owner=_text(body, "owner", max_length=200),
        decision=_text(body, "decision", max_length=500),
        deadline=deadline,
        resume_token=token,
    )


def parse_resume_token(value: object) -> str:
    if value is None or value == "":
        raise AuditInputError("'resume_token' is required.")
    if not isinstance(value, str) or not 16 <= len(value) <= 500:
        raise AuditInputError("'resume_token' must be a string of 16 to 500 characters.")
    return value


def parse_wait_resolution(data: object) -> WaitResolutionInput:
    body = _object(data, "wait resolution")
    return WaitResolutionInput(
        run_id=_text(body, "run_id", max_length=200), resume_token=parse_resume_token(body.get("resume_token"))
    )


MAX_PRINCIPAL_LENGTH = 500


def parse_principal(value: object) -> str | None:
    """A principal a replay is asked for: None when not given, else a non-empty single-line string."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise AuditInputError(f"'principal' must be a string, got {type(value).__name__}.")
    if not value.strip():
        raise AuditInputError("'principal' must not be empty (omit it instead).")
    if len(value) > MAX_PRINCIPAL_LENGTH:
        raise AuditInputError(f"'principal' is longer than {MAX_PRINCIPAL_LENGTH} characters.")
    if "\n" in value or "\r" in value:
        raise AuditInputError("'principal' must be a single line.")
    return value


def parse_prompt_contract(agent_name: str, data: object) -> ContractInput:
    body = _object(data, "prompt contract")
    agent = _text({"agent": agent_name}, "agent", max_length=200)
    kind = _text(body, "kind", max_length=16)
    if kind not in gates.CONTRACT_KINDS:
        raise AuditInputError(f"'kind' must be one of {', '.join(gates.CONTRACT_KINDS)}, got {kind!r}.")
    if kind == gates.CONTRACT_DYNAMIC:
        if body.get("value"):
            raise AuditInputError("A 'dynamic' contract takes no 'value'.")
        return ContractInput(agent_name=agent, kind=kind, value="")
    if kind == gates.CONTRACT_HASH:
        value = _text(body, "value", max_length=64).lower()
        if not HEX_SHA256.fullmatch(value):
            raise AuditInputError(
                "A 'hash' contract's 'value' must be the 64-character hex SHA-256 of the prompt."
            )
        return ContractInput(agent_name=agent, kind=kind, value=value)
    # A label is an identifier the prompt carries, not the prompt: short, so nobody stores a prompt here.
    value = _text(body, "value", max_length=120)
    return ContractInput(agent_name=agent, kind=kind, value=value)
