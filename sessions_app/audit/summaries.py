"""The audit summaries this process keeps (`gates.summary`), so auditing a run's next snapshot costs its new
messages: per conversation the last few histories audited, bounded by how many stored messages they hold.

A kept summary is only used for a history whose stored messages begin with exactly the summary's bytes
(`gates.summary.extends`), so what it answers never depends on where it came from; a miss audits from scratch.
"""

from collections.abc import Hashable, Sequence

from pydantic_ai.messages import ModelMessage

from sessions_app.audit.gates.summary import HistorySummary, extends, summarize
from sessions_app.core.sized_lru import SizedLRU

PER_CONVERSATION = 6


class Summaries:
    def __init__(self, limit: int = 50_000) -> None:
        # Stored messages held across all kept summaries.
        self._kept: SizedLRU[Hashable, list[HistorySummary]] = SizedLRU(limit, _messages_held)

    def find(self, key: Hashable, stored: Sequence[str], messages: Sequence[ModelMessage]) -> HistorySummary | None:
        """The longest kept summary of a prefix of this history, if any."""
        found = [summary for summary in self._kept.get(key) or () if extends(summary, stored, messages)]
        return max(found, key=lambda summary: len(summary.stored), default=None)

    def keep(self, key: Hashable, summary: HistorySummary) -> None:
        """Keep `summary` first among the conversation's, with as many of the others as the limit leaves room for."""
        if not summary.reusable or len(summary.stored) > self._kept.limit:
            return
        others = (kept for kept in self._kept.get(key) or () if kept.stored != summary.stored)
        kept = [summary]
        for other in others:
            if len(kept) == PER_CONVERSATION or _messages_held([*kept, other]) > self._kept.limit:
                break
            kept.append(other)
        self._kept.put(key, kept)

    def clear(self) -> None:
        self._kept.clear()


def _messages_held(summaries: list[HistorySummary]) -> int:
    return sum(len(summary.stored) for summary in summaries)


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
