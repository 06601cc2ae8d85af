"""A least-recently-written map bounded by what its values weigh (characters of text, stored messages), not by
how many there are, for what a process keeps between requests: one large value cannot hold a worker's memory, and
many small ones cost what they weigh. Thread-safe; pure (no Django)."""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable


class SizedLRU[K: Hashable, V]:
    def __init__(self, limit: int, size: Callable[[V], int]) -> None:
        self.limit = limit
        self._size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for `key`, or None; reading it does not make it recent (writing it does)."""
        with self._lock:
            return self._values.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep `value` for `key` as the most recent, then forget the least recent values while more than `limit`
        is held (this one too, when it alone weighs more)."""
        with self._lock:
            old = self._values.pop(key, None)
            self._held += self._size(value) - (self._size(old) if old is not None else 0)
            self._values[key] = value
            while self._held > self.limit and self._values:
                _, dropped = self._values.popitem(last=False)
                self._held -= self._size(dropped)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._held = 0
