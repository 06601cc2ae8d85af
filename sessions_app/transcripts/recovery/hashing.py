"""Content hashes of messages and parts, as recovery matches them (pure).

`message_hash` ignores the fields pydantic-ai stamps after a snapshot first carries a message, so a later copy
hashes the same. `HashMemo` and the part-key cache pay for each distinct message or part once per fold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace

from pydantic_ai.messages import (
    InstructionBaselinePart,
    InstructionDeltaPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
)


def _canonical(message: ModelMessage) -> ModelMessage:
    # pydantic-ai stamps timestamp, run_id and conversation_id (and fills `instructions`, appends
    # instruction delta/baseline parts) after the snapshot that first carries a message was written, so
    # those are cleared; every other field, part timestamps included, stays in the key. Same rule as the
    # harness's `SnapshotHistorySource`, so our hashes equal its hashes.
    if isinstance(message, ModelRequest):
        parts = [p for p in message.parts if not isinstance(p, InstructionDeltaPart | InstructionBaselinePart)]
        return replace(message, parts=parts, timestamp=None, run_id=None, conversation_id=None, instructions=None)
    # A response's timestamp is declared non-optional, but the hash must not see when it was stamped.
    return replace(message, timestamp=None, run_id=None, conversation_id=None)  # type: ignore[arg-type]  # see above


def message_hash(message: ModelMessage) -> str:
    """SHA-256 of the message's `ModelMessagesTypeAdapter` JSON with later-stamped fields cleared."""
    return hashlib.sha256(ModelMessagesTypeAdapter.dump_json([_canonical(message)])).hexdigest()


_PART_KEYS: ContextVar[dict[int, tuple[object, str]] | None] = ContextVar("recovery_part_keys", default=None)
"""Per-call cache of part keys: the part-by-part walks look at the same kept prefix once per candidate
alignment. Keyed by identity and holding the part, so an id cannot be reused while the call runs."""


def part_key(part: ModelRequestPart) -> str:
    cache = _PART_KEYS.get()
    if cache is not None:
        cached = cache.get(id(part))
        if cached is not None:
            return cached[1]
    key = message_hash(ModelRequest(parts=[part]))
    if cache is not None:
        cache[id(part)] = (part, key)
    return key


@contextmanager
def caching_part_keys(cache: dict[int, tuple[object, str]]) -> Iterator[None]:
    """Within the block, `part_key` keeps its keys in `cache` (a fold's own, held for its lifetime)."""
    token = _PART_KEYS.set(cache)
    try:
        yield
    finally:
        _PART_KEYS.reset(token)


class HashMemo:
    """`message_hash` paid once per distinct message, not once per snapshot that repeats it.

    Serializing is most of recovery's cost, and every snapshot repeats the history before it. A store that
    shares message objects between snapshots (Sessiondesk's own, content-addressed) hits on identity; the
    harness's stores deep-copy each snapshot, so copies are found by a cheap fingerprint and confirmed with
    dataclass equality, which compares every serialized field. Cached objects are held, so ids stay unique.
    """

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[ModelMessage, str]] = {}
        self._by_fingerprint: dict[tuple[object, ...], list[tuple[ModelMessage, str]]] = {}

    @staticmethod
    def _fingerprint(message: ModelMessage) -> tuple[object, ...]:
        first = message.parts[0] if message.parts else None
        content = getattr(first, "content", None)
        return (
            type(message),
            len(message.parts),
            type(first),
            getattr(first, "tool_call_id", None),
            getattr(first, "timestamp", None),
            len(content) if isinstance(content, str) else None,
            # A response's timestamp is set when it is created; a request's may be stamped later.
            message.timestamp if isinstance(message, ModelResponse) else None,
        )

    def held(self, message: ModelMessage) -> str | None:
        """The hash of this very object, if it was hashed here before (no copy is looked for)."""
        cached = self._by_id.get(id(message))
        return cached[1] if cached is not None else None

    def __call__(self, message: ModelMessage) -> str:
        cached = self._by_id.get(id(message))
        if cached is not None:
            return cached[1]
        fingerprint = self._fingerprint(message)
        candidates = self._by_fingerprint.setdefault(fingerprint, [])
        key = next((key for other, key in reversed(candidates) if other == message), None)
        if key is None:
            key = message_hash(message)
            candidates.append((message, key))
        self._by_id[id(message)] = (message, key)
        return key
