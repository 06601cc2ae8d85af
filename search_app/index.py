"""Search index maintenance, called inside the transaction that changes a transcript.

(Filled in by the search issue; until then the transcript is stored without an index.)
"""

from collections.abc import Sequence


def entries_added(entries: Sequence) -> None:
    """Index new transcript entries (same transaction as their insert)."""


def entries_removed(tenant_id: int, entry_ids: Sequence[int]) -> None:
    """Drop index entries of transcript entries about to be deleted (same transaction)."""
