"""Snapshot and tool-effect payloads: validated from plain data into typed values, or refused with an error that
names the problem. Pure (no Django): the API, the importers and the live adapter's server side all parse here.
"""

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from functools import cache
from operator import attrgetter
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse, ToolCallPart
from pydantic_core import to_json

from input_errors import RejectedInput
from model_messages.serialization import iso_datetime, messages_json_schema, validate_messages
from sessions_app.core.api_input import (
    INTEGRAL,
    Identifier,
    OptionalId,
    Principal,
    SegmentId,
    field_path,
    find_unsafe_string,
    out_of_range_problem,
    validate_model,
)
from sessions_app.ingest.message_memo import MEMO, Known


def _no_slash(value: str) -> str:
    if "/" in value:
        raise ValueError("contains '/' (this id travels in a URL path segment)")
    return value


class IngestError(RejectedInput):
    """A snapshot, tool effect or import file we refuse."""


MAX_PART_CHARS = 1_000_000
"""One message part (a text, a tool call's arguments, a tool return) as JSON, at most: every part is masked,
tokenized and indexed in the request that stores it, so four 2 MB messages held a worker for 47 s. 413 past it."""
MAX_TOKEN_COUNT = 2**31 - 1
"""A usage count of one model response, at most: a day's sum over any number of rows then stays inside the 64-bit
integers both databases add in (2**70 stored made `/overview/` answer 500). 400 past it."""


def _check_part_sizes(messages: list[dict[str, Any]], indices: Sequence[int]) -> None:
    for index in indices:
        message = messages[index]
        parts = message.get("parts") if isinstance(message, dict) else None
        for number, part in enumerate(parts if isinstance(parts, list) else ()):
            size = len(json.dumps(part, ensure_ascii=False))
            if size > MAX_PART_CHARS:
                raise IngestError(
                    f"'messages[{index}].parts[{number}]' is {size} characters of JSON; a part holds at most "
                    f"{MAX_PART_CHARS}.",
                    status=413,
                )


def _check_token_counts(messages: Sequence[ModelMessage], indices: Sequence[int]) -> None:
    for index, message in zip(indices, messages, strict=True):
        if not isinstance(message, ModelResponse):
            continue
        counts = {field.name: getattr(message.usage, field.name) for field in fields(message.usage)}
        counts.update({f"details.{name}": value for name, value in (message.usage.details or {}).items()})
        for name, value in counts.items():
            if isinstance(value, int) and not 0 <= value <= MAX_TOKEN_COUNT:
                raise IngestError(
                    f"'messages[{index}].usage.{name}' must be between 0 and {MAX_TOKEN_COUNT}, got {value}."
                )


MESSAGE_REF_TEMPLATE = "#/components/schemas/{model}"
_USAGE = "RequestUsage"


@cache
def _message_schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    items, definitions = messages_json_schema(MESSAGE_REF_TEMPLATE)
    usage = definitions[_USAGE]
    bounded = {"minimum": 0, "maximum": MAX_TOKEN_COUNT}
    for field in usage["properties"].values():
        if field.get("type") == "integer":
            field.update(bounded)
    usage["properties"]["details"]["additionalProperties"].update(bounded)
    return items, definitions


def message_definitions() -> dict[str, Any]:
    """The JSON schemas `messages` refers to (pydantic-ai's, with the usage counts bounded as
    `_check_token_counts` bounds them), for the OpenAPI document's components."""
    return copy.deepcopy(_message_schemas()[1])


MESSAGES_DESCRIPTION = (
    f"ModelMessagesTypeAdapter JSON; each message part at most {MAX_PART_CHARS} characters of JSON (413 past it)"
)


def messages_schema() -> dict[str, Any]:
    """The JSON schema of `messages` as the server validates it: a list of pydantic-ai's ModelMessage, referring
    to `message_definitions()` in the OpenAPI document's components (pydantic cannot place refs of another
    adapter in a model's own schema, so the document puts this in place of the model's `list[object]`)."""
    return {**copy.deepcopy(_message_schemas()[0]), "description": MESSAGES_DESCRIPTION}


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
    # sha256 over the messages as sent (before validation filled defaults such as an absent timestamp), so two
    # sends of the same body are one snapshot; empty for payloads built in process, digested from their dump.
    sent_digest: str = ""


@dataclass(frozen=True)
class ToolEffectPayload:
    run_id: str
    tool_call_id: str
    tool_name: str
    status: str
    started_at: datetime | None = None
    ended_at: datetime | None = None


@dataclass(frozen=True)
class RuntimeSpanPayload:
    """A runtime span OTLP carried (a compaction, an approval review, a judgement): `facts` are only the named
    attributes of `ingest.otlp.RUNTIME_SPANS`, scalars, never arguments or content."""

    run_id: str
    span_key: str
    kind: str
    started_at: datetime
    ended_at: datetime
    facts: dict[str, str | int | float | bool]


STEP_MAX = 2**31 - 1
# Read by `_aware_time`: the document says RFC 3339's date-time (a time zone required), which it takes.
TimeText = Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class SnapshotIn(BaseModel):
    """POST /api/v1/snapshots, one line of a .jsonl import, or a .json import object."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"additionalProperties": True})

    conversation_id: Identifier
    run_id: SegmentId
    agent: Annotated[OptionalId, AfterValidator(_no_slash)] = ""
    parent_run_id: Annotated[OptionalId, AfterValidator(_no_slash)] = ""
    step: Annotated[int, Field(strict=True, ge=0, le=STEP_MAX), INTEGRAL] | None = None
    state: Literal["complete", "interrupted"] = "complete"
    idempotency_key: OptionalId = ""
    source: Literal["server", "client"] = "server"
    started_at: TimeText | None = Field(default=None, description="ISO 8601 date-time with a time zone")
    principal: Principal | None = None
    messages: list[dict[str, Any]] = Field(description=MESSAGES_DESCRIPTION)

    @field_validator("conversation_id", "run_id", "agent", "parent_run_id", "idempotency_key", mode="before")
    @classmethod
    def _absent_when_null(cls, value: object) -> object:
        return "" if value is None else value

    @field_validator("principal", mode="before")
    @classmethod
    def _principal_is_a_string(cls, value: object) -> object:
        if value is not None and not isinstance(value, str):
            raise ValueError(f"must be a string, got {type(value).__name__}")
        return value


class ToolEffectIn(BaseModel):
    """POST /api/v1/tool-effects: the harness's tool-effect ledger, never arguments or results."""

    model_config = ConfigDict(extra="ignore")

    run_id: SegmentId
    tool_call_id: Identifier
    tool_name: Identifier
    status: Literal["started", "completed", "failed"]
    started_at: TimeText | None = Field(default=None, description="ISO 8601 date-time with a time zone")
    ended_at: TimeText | None = Field(default=None, description="ISO 8601 date-time with a time zone")


# The snapshot fields a payload keeps as they were sent.
_AS_SENT = {"conversation_id", "run_id", "agent", "parent_run_id", "idempotency_key", "state", "step"}


def _aware_time(value: str | None, name: str) -> datetime | None:
    if value is None or value == "":
        return None
    parsed = iso_datetime(value)
    if parsed is None or parsed.tzinfo is None:
        raise IngestError(f"'{name}' must be an ISO 8601 date-time with a time zone, got {value[:40]!r}.")
    if problem := out_of_range_problem(parsed):
        raise IngestError(f"'{name}' {problem}, got {value[:40]!r}.")
    return parsed.astimezone(UTC)  # PostgreSQL holds offsets up to ±15:59 only, Python up to ±23:59


def parse_snapshot(data: object, *, strings_checked: bool = False) -> SnapshotPayload:
    """A validated snapshot payload, or an IngestError naming the first problem. `strings_checked`: `data` is what
    `decode_json` gave, which refuses any string that cannot be stored, so its strings are not read again."""
    return _parse(data, None, strings_checked)


def snapshot_of_messages(data: Mapping[str, object], messages: Sequence[ModelMessage]) -> SnapshotPayload:
    """`data` (a snapshot's fields, without messages) with `messages`, pydantic-ai messages already (a traced run's,
    decoded and validated by `ingest.otlp`), as `parse_snapshot` would make it of their dump: a message kept in the
    memo (an inherited copy) was checked when it was first validated and is taken as it is; only the others are
    dumped and checked. A long history costs its new messages, not a dump and a validation of all of it."""
    kept = MEMO.of_each(messages)
    fresh = [message for message, known in zip(messages, kept, strict=True) if known is None]
    dumped = ModelMessagesTypeAdapter.dump_python(fresh, mode="json") if fresh else []
    return _parse({**data, "messages": dumped}, kept, strings_checked=False)


def _parse(data: object, kept: Sequence[Known | None] | None, strings_checked: bool) -> SnapshotPayload:
    """`parse_snapshot` of `data`; with `kept`, `data`'s messages are the snapshot's messages whose entry in `kept`
    is None, in order, and the others are those entries' messages."""
    if isinstance(data, dict) and "messages" in data and not isinstance(data["messages"], list):
        raise IngestError("'messages' must be a list of ModelMessagesTypeAdapter messages.")
    unsafe = None if strings_checked else find_unsafe_string(data)
    if unsafe:
        raise IngestError(f"'{unsafe[0]}' {unsafe[1]}.")
    body = validate_model(SnapshotIn, data, "snapshot", IngestError)
    digests = [hashlib.sha256(to_json(m, bytes_mode="base64")).digest() for m in body.messages]
    # Messages sent before as exactly these bytes are the objects validated then; only the others are checked.
    messages: list[ModelMessage | None] = [_known(digest.hex()) for digest in digests]
    unknown = [i for i, message in enumerate(messages) if message is None]
    _check_part_sizes(body.messages, unknown)
    try:
        validated = validate_messages([body.messages[i] for i in unknown])
    except ValidationError as error:
        first = error.errors()[0]
        loc = _in_snapshot(first["loc"], unknown)
        more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
        raise IngestError(f"Invalid message at {field_path(loc, 'messages')}: {first['msg']}{more}.") from None
    _check_token_counts(validated, unknown)
    for i, message in zip(unknown, validated, strict=True):
        known = MEMO.keep(message, digests[i].hex())
        messages[i] = known.message if known is not None else message
    if kept is not None:
        given = iter(zip(messages, digests, strict=True))
        pairs = [(known.message, known.digest) if known else next(given) for known in kept]
        messages, digests = [message for message, _ in pairs], [digest for _, digest in pairs]
    return SnapshotPayload(
        **body.model_dump(include=_AS_SENT),
        messages=[message for message in messages if message is not None],
        client_supplied=body.source == "client",
        started_at=_aware_time(body.started_at, "started_at"),
        principal=body.principal or "",
        sent_digest=hashlib.sha256(b"\n".join(digests)).hexdigest(),
    )


def _in_snapshot(loc: Sequence[str | int], validated: Sequence[int]) -> Sequence[str | int]:
    """An error's location among the validated messages, as a location in the snapshot's messages."""
    if loc and isinstance(loc[0], int) and 0 <= loc[0] < len(validated):
        return (validated[loc[0]], *loc[1:])
    return loc


def _known(sha: str) -> ModelMessage | None:
    known = MEMO.get(sha)
    return known.message if known is not None else None


def parse_tool_effect(data: object) -> ToolEffectPayload:
    """A validated tool-effect record, or an IngestError naming the first problem."""
    body = validate_model(ToolEffectIn, data, "tool effect", IngestError)
    return ToolEffectPayload(
        run_id=body.run_id,
        tool_call_id=body.tool_call_id,
        tool_name=body.tool_name,
        status=body.status,
        started_at=_aware_time(body.started_at, "started_at"),
        ended_at=_aware_time(body.ended_at, "ended_at"),
    )


def is_final(messages: Sequence[ModelMessage]) -> bool:
    """A history that ends in a model response without tool calls is a finished run."""
    if not messages or not isinstance(messages[-1], ModelResponse):
        return False
    return not any(isinstance(part, ToolCallPart) for part in messages[-1].parts)


def run_start(messages: Sequence[ModelMessage]) -> datetime | None:
    """When the run that wrote this history started: its own first message, not an inherited one.

    pydantic-ai stamps each message with the agent run that produced it; the last stamped message is this run's
    (the harness may persist a step ending in a request not sent yet, with no run id), so the earliest message
    carrying the same run id is where it began. Recovery orders runs by this time.
    """
    own = next((m.run_id for m in reversed(messages) if m.run_id is not None), None)
    stamps = [m.timestamp for m in messages if m.timestamp is not None and (own is None or m.run_id == own)]
    return min(stamps) if stamps else None


def last_stamp(messages: Sequence[ModelMessage]) -> datetime | None:
    """The latest time a message of the history is stamped with, if any (in one pass: a history can be long)."""
    return max(filter(None, map(attrgetter("timestamp"), messages)), default=None)


def check_snapshot_size(payload: SnapshotPayload, limit: int) -> None:
    """Refuse a snapshot longer than `limit` messages: recovery and the audit stay bounded per request."""
    if len(payload.messages) > limit:
        raise IngestError(
            f"A snapshot holds at most {limit} messages (SESSIONDESK_MAX_SNAPSHOT_MESSAGES); "
            f"this one has {len(payload.messages)}.",
            status=413,
        )
