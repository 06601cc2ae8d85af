"""What changed between two consecutive snapshots of a run: pure, over message content hashes.

A snapshot is the run's whole live history at a step boundary, so between two snapshots the history normally
only grows; compaction shows up as messages removed, and a summarizing compaction as a summary added where
the removed messages were.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher


@dataclass(frozen=True)
class DiffMessage:
    position: int
    content_hash: str
    role: str
    text: str
    summary: bool = False


@dataclass(frozen=True)
class DiffRow:
    """`change`: kept (a run of unchanged messages, folded), removed, added."""

    change: str
    messages: tuple[DiffMessage, ...]

    @property
    def count(self) -> int:
        return len(self.messages)


@dataclass(frozen=True)
class SnapshotDiff:
    rows: list[DiffRow]
    removed: int
    added: int
    kept: int
    summary_added: bool

    @property
    def compacted(self) -> bool:
        return self.removed > 0


def diff_snapshots(before: Sequence[DiffMessage], after: Sequence[DiffMessage]) -> SnapshotDiff:
    """Rows of kept, removed and added messages turning `before` into `after`, in `after`'s order."""
    matcher = SequenceMatcher(a=[m.content_hash for m in before], b=[m.content_hash for m in after], autojunk=False)
    rows: list[DiffRow] = []
    removed = added = kept = 0
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            rows.append(DiffRow("kept", tuple(after[b1:b2])))
            kept += b2 - b1
            continue
        if a2 > a1:
            rows.append(DiffRow("removed", tuple(before[a1:a2])))
            removed += a2 - a1
        if b2 > b1:
            rows.append(DiffRow("added", tuple(after[b1:b2])))
            added += b2 - b1
    summary_added = any(row.change == "added" and any(m.summary for m in row.messages) for row in rows)
    return SnapshotDiff(rows, removed, added, kept, summary_added)
