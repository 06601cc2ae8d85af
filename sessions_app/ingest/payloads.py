"""Snapshot and tool-effect payloads: validated from plain data into typed values, or refused with an error that
names the problem. Pure (no Django): the API, the importers and the live adapter's server side all parse here.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart

from sessions_app.core.input_errors import RejectedInput
from sessions_app.core.serialization import validate_messages

SOURCES = ("server", "client")
MAX_ID_LENGTH = 200
MAX_PRINCIPAL_LENGTH = 500
STATES = ("complete", "interrupted")


class IngestError(RejectedInput):
    """A snapshot, tool effect or import file we refuse."""


@dataclass(frozen=True)
class SnapshotPayload:
    conversation_id: str
    run_id: str
    agent: str
    state: str
    messages: list[ModelMessage]
    parent_run_id: str = ""
    step: int | None = None
    idempotency_key: str = ""
    client_supplied: bool = False
    started_at: datetime | None = None
    principal: str = ""


@dataclass(frozen=True)
class ToolEffectPayload:
    run_id: str
    tool_call_id: str
    tool_name: str
    status: str
    started_at: datetime | None = None
    ended_at: datetime | None = None


def _format_loc(loc: Sequence[str | int]) -> str:
    path = "messages"
    for item in loc:
        path += f"[{item}]" if isinstance(item, int) else f".{item}"
    return path


def _identifier(data: dict[str, Any], name: str, *, required: bool) -> str:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise IngestError(f"'{name}' is required.")
        return ""
    if not isinstance(value, str):
        raise IngestError(f"'{name}' must be a string, got {type(value).__name__}.")
    if len(value) > MAX_ID_LENGTH:
        raise IngestError(f"'{name}' is longer than {MAX_ID_LENGTH} characters.")
    return value


def _principal(data: dict[str, object]) -> str:
    """The end user or authorization the history was loaded for: opaque, optional, hashed by the service."""
    value = data.get("principal")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise IngestError(f"'principal' must be a string, got {type(value).__name__}.")
    if not value.strip():
        raise IngestError("'principal' must not be empty (omit it instead).")
    if len(value) > MAX_PRINCIPAL_LENGTH:
        raise IngestError(f"'principal' is longer than {MAX_PRINCIPAL_LENGTH} characters.")
    if "\n" in value or "\r" in value:
        raise IngestError("'principal' must be a single line.")
    return value


def parse_snapshot(data: object) -> SnapshotPayload:
    """A validated snapshot payload, or an IngestError naming the first problem."""
    if not isinstance(data, dict):
        raise IngestError(f"A snapshot must be a JSON object, got {type(data).__name__}.")
    state = data.get("state", "complete")
    if state not in STATES:
        raise IngestError(f"'state' must be 'complete' or 'interrupted', got {state!r}.")
    step = data.get("step")
    if step is not None and (not isinstance(step, int) or isinstance(step, bool)):
        raise IngestError(f"'step' must be an integer, got {step!r}.")
    raw_messages = data.get("messages")
    if not isinstance(raw_messages, list):
        raise IngestError("'messages' must be a list of ModelMessagesTypeAdapter messages.")
    try:
        messages = validate_messages(raw_messages)
    except ValidationError as error:
        first = error.errors()[0]
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise IngestError(f"Invalid message at {_format_loc(first['loc'])}: {first['msg']}{more}.") from None
    started_at = data.get("started_at")
    if started_at is not None:
        parsed = _parse_time(started_at)
        if parsed is None or parsed.tzinfo is None:
            raise IngestError(f"'started_at' must be an ISO 8601 date-time with a time zone, got {started_at!r}.")
        started_at = parsed
    source = data.get("source", "server")
    if source not in SOURCES:
        raise IngestError(f"'source' must be 'server' or 'client', got {source!r}.")
    return SnapshotPayload(
        conversation_id=_identifier(data, "conversation_id", required=True),
        run_id=_identifier(data, "run_id", required=True),
        agent=_identifier(data, "agent", required=False),
        parent_run_id=_identifier(data, "parent_run_id", required=False),
        idempotency_key=_identifier(data, "idempotency_key", required=False),
        state=state,
        step=step,
        messages=messages,
        client_supplied=source == "client",
        started_at=started_at,
        principal=_principal(data),
    )


def is_final(messages: Sequence[ModelMessage]) -> bool:
    """A history that ends in a model response without tool calls is a finished run."""
    if not messages or not isinstance(messages[-1], ModelResponse):
        return False
    return not any(isinstance(part, ToolCallPart) for part in messages[-1].parts)


def run_start(messages: Sequence[ModelMessage]) -> datetime | None:
    """When the run that wrote this history started: its own first message, not an inherited one.

    pydantic-ai stamps each message with the agent run that produced it; the last message is this run's, so the
    earliest message carrying the same run id is where it began. Recovery orders runs by this time.
    """
    own = messages[-1].run_id if messages else None
    stamps = [m.timestamp for m in messages if m.timestamp is not None and (own is None or m.run_id == own)]
    return min(stamps) if stamps else None


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def check_snapshot_size(payload: SnapshotPayload, limit: int) -> None:
    """Refuse a snapshot longer than `limit` messages: recovery and the audit stay bounded per request."""
    if len(payload.messages) > limit:
        raise IngestError(
            f"A snapshot holds at most {limit} messages (SESSIONDESK_MAX_SNAPSHOT_MESSAGES); "
            f"this one has {len(payload.messages)}.",
            status=413,
        )
