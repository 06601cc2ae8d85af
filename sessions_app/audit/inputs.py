"""Validation of receipts, waits and prompt contracts as they arrive (API or CLI). Pure: plain data in, a
frozen input or an `AuditInputError` naming the first problem out.

Every field is short and single-line on purpose: these records point at the world (a reference, a digest, a
label), they never copy content into the store.
"""

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationInfo, field_validator

from input_errors import RejectedInput
from sessions_app.audit.vocabulary import ContractKind
from sessions_app.core.api_input import (
    LINE_EDGES,
    PRINCIPAL,
    REQUIRED_LINE_PATTERN,
    Line,
    SegmentId,
    out_of_range_problem,
    validate_model,
    validate_text,
)

HEX_SHA256 = re.compile(r"[0-9a-f]{64}")
type Json = dict[str, Any]


class AuditInputError(RejectedInput):
    """A receipt, wait, prompt contract or run reference we refuse."""


class NotInTenant(AuditInputError):
    """A run or conversation that does not exist in this tenant: answered exactly like one that does not exist
    anywhere (missing, of another tenant, or for a client key not written by this key)."""

    def __init__(self, what: str, identifier: str) -> None:
        super().__init__(f"No {what} '{identifier[:200]}' in this tenant.", status=404)


class UnknownRun(NotInTenant):
    def __init__(self, run_id: str) -> None:
        super().__init__("run", run_id)


class UnknownConversation(NotInTenant):
    def __init__(self, conversation_id: str) -> None:
        super().__init__("conversation", conversation_id)


RunId = Annotated[SegmentId, StringConstraints(strip_whitespace=True)]
Required200 = Annotated[
    Line, StringConstraints(min_length=1, max_length=200), Field(json_schema_extra={"pattern": REQUIRED_LINE_PATTERN})
]
RequiredLine500 = Annotated[
    Line, StringConstraints(min_length=1, max_length=500), Field(json_schema_extra={"pattern": REQUIRED_LINE_PATTERN})
]
ResumeToken = Annotated[str, Field(min_length=16, max_length=500, description="16 to 500 characters")]


class _Input(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _null_is_absent(cls, value: object, info: ValidationInfo) -> object:
        # null means "not given": an empty text field (so "is required"), or None where None is allowed.
        return "" if value is None and info.field_name != "resume_token" else value


class ReceiptInput(_Input):
    """POST /api/v1/receipts."""

    run_id: RunId
    effect: Required200
    evidence: Literal["activity", "transport", "outcome"]
    checked_by: Required200
    reference: Annotated[Line, StringConstraints(max_length=500)] = ""


class WaitInput(_Input):
    """POST /api/v1/waits (the deadline is checked against the clock after validation)."""

    run_id: RunId
    owner: Required200
    decision: RequiredLine500
    deadline: datetime = Field(description="ISO 8601 date-time with a time zone, still ahead")
    resume_token: ResumeToken | None = None

    @field_validator("deadline", mode="before")
    @classmethod
    def _deadline(cls, value: object) -> datetime:
        return _deadline(value)

    @field_validator("resume_token", mode="before")
    @classmethod
    def _token(cls, value: object) -> object:
        return None if value in (None, "") else _token_shape(value)


class WaitResolutionInput(_Input):
    """POST /api/v1/waits/resolve."""

    run_id: RunId
    resume_token: ResumeToken

    @field_validator("resume_token", mode="before")
    @classmethod
    def _token(cls, value: object) -> object:
        return value if value in (None, "") else _token_shape(value)


def _contract_kind(kind: str, value: Json) -> Json:
    return {"properties": {"kind": {"const": kind}, "value": value}, "required": ["kind", "value"]}


# What `parse_prompt_contract` takes of each kind, for the OpenAPI document.
CONTRACT_KINDS: Json = {
    "oneOf": [
        _contract_kind(
            "hash", {"type": "string", "pattern": f"^{LINE_EDGES}[0-9a-fA-F]{{64}}{LINE_EDGES}(?![\\s\\S])"}
        ),
        _contract_kind("label", {"type": "string", "maxLength": 120, "pattern": REQUIRED_LINE_PATTERN}),
        {
            "properties": {
                "kind": {"const": "dynamic"},
                "value": {"anyOf": [{"type": "null"}, {"type": "string", "pattern": f"^{LINE_EDGES}(?![\\s\\S])"}]},
            },
            "required": ["kind"],
        },
    ]
}


class ContractBody(_Input):
    """POST /api/v1/agents/<name>/prompt-contract."""

    model_config = ConfigDict(extra="ignore", frozen=True, json_schema_extra=CONTRACT_KINDS)

    kind: Literal["hash", "label", "dynamic"]
    value: Annotated[Line, StringConstraints(max_length=120)] = Field(
        default="", description="hash: 64 hex digits; label: a short single line; dynamic: none"
    )


class ContractInput(_Input):
    agent_name: str
    kind: str
    value: str


def _token_shape(value: object) -> object:
    if not isinstance(value, str) or not 16 <= len(value) <= 500:
        raise ValueError("must be a string of 16 to 500 characters")
    return value


def _parse[M: _Input](model: type[M], data: object, what: str) -> M:
    return validate_model(model, data, what, AuditInputError)


def parse_receipt(data: object) -> ReceiptInput:
    return _parse(ReceiptInput, data, "receipt")


def _deadline(value: object) -> datetime:
    if not isinstance(value, str):
        raise ValueError("must be an ISO 8601 date-time string with a time zone")
    try:
        deadline = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"is not an ISO 8601 date-time: {value[:40]!r}") from None
    if deadline.tzinfo is None:
        raise ValueError("needs a time zone (for example 2026-12-01T09:00:00+00:00)")
    if problem := out_of_range_problem(deadline):
        raise ValueError(problem)
    return deadline.astimezone(UTC)  # PostgreSQL holds offsets up to ±15:59 only, Python up to ±23:59


def parse_deadline(value: object) -> datetime:
    try:
        return _deadline(value)
    except ValueError as error:
        raise AuditInputError(f"'deadline' {error}.") from None


def parse_wait(data: object, *, now: datetime) -> WaitInput:
    wait = _parse(WaitInput, data, "wait")
    if wait.deadline <= now:
        raise AuditInputError("'deadline' is in the past; a wait needs a deadline still ahead.")
    return wait


def parse_resume_token(value: object) -> str:
    if value is None or value == "":
        raise AuditInputError("'resume_token' is required.")
    if not isinstance(value, str) or not 16 <= len(value) <= 500:
        raise AuditInputError("'resume_token' must be a string of 16 to 500 characters.")
    return value


def parse_wait_resolution(data: object) -> WaitResolutionInput:
    return _parse(WaitResolutionInput, data, "wait resolution")


def parse_principal(value: object) -> str | None:
    """A principal a replay is asked for: None when not given, else a non-empty single-line string."""
    if value is None:
        return None
    return validate_text(PRINCIPAL, value, "principal", AuditInputError)


def parse_prompt_contract(agent_name: str, data: object) -> ContractInput:
    body = _parse(ContractBody, data, "prompt contract")
    agent = _parse(_AgentName, {"agent": agent_name}, "prompt contract").agent
    if body.kind == ContractKind.DYNAMIC.value:
        if body.value:
            raise AuditInputError("A 'dynamic' contract takes no 'value'.")
        return ContractInput(agent_name=agent, kind=body.kind, value="")
    if not body.value:
        raise AuditInputError("'value' is required.")
    if body.kind == ContractKind.HASH.value:
        value = body.value.lower()
        if not HEX_SHA256.fullmatch(value):
            raise AuditInputError("A 'hash' contract's 'value' must be the 64-character hex SHA-256 of the prompt.")
        return ContractInput(agent_name=agent, kind=body.kind, value=value)
    # A label is an identifier the prompt carries, not the prompt: short, so nobody stores a prompt here.
    return ContractInput(agent_name=agent, kind=body.kind, value=body.value)


class _AgentName(_Input):
    agent: Annotated[SegmentId, StringConstraints(strip_whitespace=True)]
