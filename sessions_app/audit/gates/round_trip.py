"""Gate 1, round trip: the stored history survives pydantic-ai's ModelMessagesTypeAdapter unchanged. Pure.

Whether stored bytes survive the adapter depends on the bytes alone (and this process's pydantic-ai), so the
sha256 of every stored message found clean is kept per process (`CLEAN`, bounded): a run's next snapshot repeats
its whole history, and only the messages not seen clean before are parsed, dumped and validated back. A message
with a problem is never kept, so it is examined, and reported, on every audit.
"""

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from sessions_app.audit.digests import sha256_hex
from sessions_app.audit.gates.context import ROUND_TRIP, AuditContext, Finding, as_items
from sessions_app.audit.vocabulary import Verdict


class CleanMessages:
    """The sha256 of stored messages that survived the round trip, with how many messages each holds."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self._items: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def count(self, sha: str) -> int | None:
        with self._lock:
            count = self._items.get(sha)
            if count is not None:
                self._items.move_to_end(sha)
            return count

    def keep(self, sha: str, count: int) -> None:
        with self._lock:
            self._items[sha] = count
            while len(self._items) > self.limit:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


CLEAN = CleanMessages()


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


def round_trip_problems(
    stored_messages: Sequence[str], messages: Sequence[ModelMessage], start: int = 0
) -> tuple[list[tuple[int, str, str]], int]:
    """What gate 1 finds in `stored_messages` (loaded as `messages`): (index + `start`, sha256, problem) for each
    stored message that does not survive the round trip, and how many messages the stored ones hold.

    Each stored message's answer depends on its bytes alone, so a history's problems are its prefix's plus its
    new messages' (`sessions_app.audit.gates.summary` keeps a prefix's).
    """
    shas = [hashlib.sha256(raw.encode()).hexdigest() for raw in stored_messages]
    known = [CLEAN.count(sha) for sha in shas]
    parsed: dict[int, Any] = {}
    problems: dict[int, str] = {}
    offsets: dict[int, int] = {}
    offset = 0
    for index, raw in enumerate(stored_messages):
        offsets[index] = offset
        count = known[index]
        if count is not None:
            offset += count
            continue
        try:
            parsed[index] = as_items(json.loads(raw))
            offset += len(parsed[index])
        except ValueError:
            problems[index] = "is not JSON"
    # Fast path: the messages not known clean in one dump and one validate-back; a message whose dump equals what
    # is stored needs no normalizing or hashing. Only the others are examined one by one.
    readable = list(parsed)
    try:
        if offset != len(messages):
            raise ValueError("the messages were not loaded from these stored messages")
        unknown = [message for i in readable for message in messages[offsets[i] : offsets[i] + len(parsed[i])]]
        dumped = ModelMessagesTypeAdapter.dump_python(unknown, mode="json")
        if ModelMessagesTypeAdapter.validate_python(dumped) != unknown:
            raise ValueError("the dump does not validate back to the same messages")
    except (ValueError, ValidationError):
        suspects = readable
    else:
        suspects, at = [], 0
        for index in readable:
            count = len(parsed[index])
            if dumped[at : at + count] != parsed[index]:
                suspects.append(index)
            at += count
    for index in suspects:
        problem = _round_trip_problem(parsed[index])
        if problem:
            problems[index] = problem
    for index in readable:
        if index not in problems:
            CLEAN.keep(shas[index], len(parsed[index]))
    return [(index + start, shas[index], problem) for index, problem in sorted(problems.items())], offset


def round_trip_findings(problems: Sequence[tuple[int, str, str]]) -> list[Finding]:
    return [
        Finding(
            gate=ROUND_TRIP,
            code=Verdict.ROUND_TRIP_MISMATCH,
            key=f"round_trip:{sha}",
            detail=f"Stored message {index} {problem}.",
        )
        for index, sha, problem in problems
    ]


def check_round_trip(messages: Sequence[ModelMessage], ctx: AuditContext) -> list[Finding]:
    """Gate 1: dump with ModelMessagesTypeAdapter, validate back, normalize, hash; compare with the stored."""
    return round_trip_findings(round_trip_problems(ctx.stored_messages, messages)[0])
