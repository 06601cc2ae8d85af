"""Messages validated before, found again by the sha256 of their bytes. Pure (no Django).

Every door that takes a whole history (a client sending its history at each step, pydantic-ai's run span, an
import of threaded snapshots) repeats the messages it sent before. A message whose bytes as sent are exactly its
`ModelMessagesTypeAdapter` dump (so validation filled in nothing, such as an absent timestamp) validates to the same
message every time: it is kept here under that sha256, which is also its `StoredMessage.sha256`, and the next copy
is the same object, with no validation, dump or hashing. Sharing one object also lets recovery's hash memo hit on
identity. A bounded LRU per process; messages are never mutated after validation.
"""

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai.messages import ModelMessage

from model_messages.serialization import dump_message, load_message
from sessions_app.transcripts.recovery.hashing import message_hash

LIMIT = 50_000  # messages kept per process


@dataclass(frozen=True, eq=False)  # compared by identity: finding the first None in a history's 1,000 entries is
class Known:  # then a C loop, not 1,000 calls of a generated __eq__
    message: ModelMessage
    dumped: str  # ModelMessagesTypeAdapter JSON of one message, as stored
    digest: bytes  # sha256 of `dumped`
    sha256: str  # `digest` in hex
    content_hash: str  # recovery's `message_hash`


class MessageMemo:
    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._by_sha: OrderedDict[str, Known] = OrderedDict()
        self._by_id: dict[int, Known] = {}  # the entry holds its message, so an id is not reused while kept
        self._lock = threading.Lock()

    def get(self, sha: str) -> Known | None:
        with self._lock:
            known = self._by_sha.get(sha)
            if known is not None:
                self._by_sha.move_to_end(sha)
            return known

    def of_each(self, messages: Sequence[ModelMessage]) -> list[Known | None]:
        """The entry of each of these very objects, None for one not kept; the lock held once for all of them (a
        1,000-message history asks for 1,000)."""
        with self._lock:
            return [self._by_id.get(id(message)) for message in messages]

    def keep(self, message: ModelMessage, sent_sha: str | None = None, loaded_from: str | None = None) -> Known | None:
        """Keep `message` if it dumps to the bytes it was validated from (their sha256 `sent_sha`, or the stored
        text `loaded_from`), and return its entry (the one kept before, if its bytes were seen already)."""
        dumped = dump_message(message)
        if loaded_from is not None and dumped != loaded_from:
            return None  # stored bytes that no longer round-trip: the audit's round-trip gate reports them
        digest = hashlib.sha256(dumped.encode()).digest()
        sha = digest.hex()
        if sent_sha is not None and sha != sent_sha:
            return None
        with self._lock:
            known = self._by_sha.get(sha)
            if known is not None:
                return known
        known = Known(message, dumped, digest, sha, message_hash(message))
        with self._lock:
            self._by_sha[sha] = known
            self._by_id[id(message)] = known
            while len(self._by_sha) > self.limit:
                _, old = self._by_sha.popitem(last=False)
                self._by_id.pop(id(old.message), None)
        return known

    def load(self, data: str) -> tuple[ModelMessage, Known | None]:
        """A stored message's text as a message: the memo's object when its bytes are kept (or are kept now), so
        every reader of the same row shares one object; and its entry, None when the text no longer round-trips."""
        known = self.keep(message := load_message(data), loaded_from=data)
        return (known.message, known) if known is not None else (message, None)

    def clear(self) -> None:
        with self._lock:
            self._by_sha.clear()
            self._by_id.clear()


MEMO = MessageMemo()
