"""The audit summaries this process keeps (`gates.summary`), so auditing a run's next snapshot costs its new
messages: per conversation the last few histories audited, bounded by how many stored messages they hold.

A kept summary is only used for a history whose stored messages begin with exactly the summary's bytes
(`gates.summary.extends`), so what it answers never depends on where it came from; a miss audits from scratch.
"""

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

from pydantic_ai.messages import ModelMessage

from sessions_app.audit.gates.summary import HistorySummary, extends, summarize

PER_CONVERSATION = 6


class Summaries:
    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit  # stored messages held across all kept summaries
        self._kept: OrderedDict[Hashable, list[HistorySummary]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def find(self, key: Hashable, stored: Sequence[str], messages: Sequence[ModelMessage]) -> HistorySummary | None:
        """The longest kept summary of a prefix of this history, if any."""
        with self._lock:
            kept = list(self._kept.get(key, ()))
        found = [summary for summary in kept if extends(summary, stored, messages)]
        return max(found, key=lambda summary: len(summary.stored), default=None)

    def keep(self, key: Hashable, summary: HistorySummary) -> None:
        if not summary.reusable or len(summary.stored) > self.limit:
            return
        with self._lock:
            before = self._kept.pop(key, [])
            kept = [summary, *(s for s in before if s.stored != summary.stored)][:PER_CONVERSATION]
            self._held += sum(len(s.stored) for s in kept) - sum(len(s.stored) for s in before)
            self._kept[key] = kept
            while self._held > self.limit and len(self._kept) > 1:
                _, dropped = self._kept.popitem(last=False)
                self._held -= sum(len(s.stored) for s in dropped)

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._held = 0


SUMMARIES = Summaries()


def summary_of(
    key: Hashable, stored: Sequence[str], messages: Sequence[ModelMessage], kept: Summaries = SUMMARIES
) -> HistorySummary:
    """The history's summary, extended from the longest kept summary of its prefix under `key`, and kept.

    The history without its last message is kept too: a run's next snapshot often stores its last message again
    with a field stamped since (a request's time, once sent), and goes on from there.
    """
    before = kept.find(key, stored, messages)
    if len(stored) > 1 and len(messages) == len(stored) and (before is None or len(before.stored) < len(stored) - 1):
        before = summarize(stored[:-1], messages[:-1], before)
        kept.keep(key, before)
    summary = summarize(stored, messages, before)
    kept.keep(key, summary)
    return summary
