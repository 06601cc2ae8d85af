"""Gate 1, round trip: the stored history survives pydantic-ai's ModelMessagesTypeAdapter unchanged. Pure."""

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from sessions_app.audit.digests import sha256_hex
from sessions_app.audit.gates.context import ROUND_TRIP, AuditContext, Finding, as_items
from sessions_app.audit.vocabulary import Verdict


def _without_nulls(value: Any) -> Any:
    """Normalization: an absent key and a null one mean the same to the adapter."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(_without_nulls(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _first_difference(stored: Any, again: Any, path: str = "") -> str:
    """The JSON path where two values first differ: a location, never the values themselves."""
    if isinstance(stored, dict) and isinstance(again, dict):
        for key in sorted(set(stored) | set(again)):
            if key not in again:
                return f"{path}.{key} (dropped by the adapter)"
            if key not in stored:
                return f"{path}.{key} (added by the adapter)"
            if _canonical(stored[key]) != _canonical(again[key]):
                return _first_difference(stored[key], again[key], f"{path}.{key}")
    if isinstance(stored, list) and isinstance(again, list):
        if len(stored) != len(again):
            return f"{path} (length {len(stored)} became {len(again)})"
        for index, (left, right) in enumerate(zip(stored, again, strict=True)):
            if _canonical(left) != _canonical(right):
                return _first_difference(left, right, f"{path}[{index}]")
    return path or "(whole message)"


def _validation_location(error: ValidationError) -> str:
    first = error.errors()[0]
    return ".".join(str(item) for item in first["loc"]) + f" ({first['type']})"


def _round_trip_problem(stored: Any) -> str | None:
    """Why one stored message does not survive the adapter, or None when it does."""
    try:
        loaded = ModelMessagesTypeAdapter.validate_python(stored)
    except ValidationError as error:
        return f"does not validate as a ModelMessage at {_validation_location(error)}"
    dumped = ModelMessagesTypeAdapter.dump_python(loaded, mode="json")
    again = ModelMessagesTypeAdapter.dump_python(ModelMessagesTypeAdapter.validate_python(dumped), mode="json")
    if sha256_hex(_canonical(stored)) == sha256_hex(_canonical(again)):
        return None
    return f"re-serializes differently at {_first_difference(_without_nulls(stored), _without_nulls(again))}"


def check_round_trip(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 1: dump with ModelMessagesTypeAdapter, validate back, normalize, hash; compare with the stored."""
    parsed: list[Any] = []
    problems: dict[int, str] = {}
    for index, raw in enumerate(ctx.stored_messages):
        try:
            parsed.append(as_items(json.loads(raw)))
        except ValueError:
            parsed.append(None)
            problems[index] = "is not JSON"
    # Fast path: the whole history in one dump and one validate-back; a message whose dump equals what is
    # stored needs no normalizing or hashing. Only the others are examined one by one.
    readable = [index for index, items in enumerate(parsed) if items is not None]
    items = [item for i in readable for item in parsed[i]]
    try:
        if len(items) != len(messages):
            raise ValueError("the messages were not loaded from these stored messages")
        dumped = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
        if ModelMessagesTypeAdapter.validate_python(dumped) != list(messages):
            raise ValueError("the dump does not validate back to the same messages")
    except (ValueError, ValidationError):
        suspects = readable
    else:
        suspects, offset = [], 0
        for index in readable:
            count = len(parsed[index])
            if dumped[offset : offset + count] != parsed[index]:
                suspects.append(index)
            offset += count
    for index in suspects:
        problem = _round_trip_problem(parsed[index])
        if problem:
            problems[index] = problem
    return [
        Finding(
            gate=ROUND_TRIP,
            code=Verdict.ROUND_TRIP_MISMATCH,
            key=f"round_trip:{sha256_hex(ctx.stored_messages[index])}",
            detail=f"Stored message {index} {problem}.",
        )
        for index, problem in sorted(problems.items())
    ]
