"""Reading one window of a conversation's recovered transcript for display (ORM edge of transcript_layout)."""

from dataclasses import dataclass

from pydantic_ai.messages import ModelMessagesTypeAdapter

from model_messages.serialization import join_messages
from sessions_app.models import Conversation, TranscriptEntry
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.transcript_layout import EntryInput, Mask, MessageView, lay_out

WINDOW = 1000
# Messages read beyond each edge of a window so a call and its result on either side of the edge still pair.
PAIRING_MARGIN = 50
# Each EntryInput field but the message, and the TranscriptEntry column it is read from.
_ENTRY_COLUMNS = {
    "position": "position",
    "role": "role",
    "run_id": "run__run_id",
    "timestamp": "timestamp",
    "recovered_from_compaction": "recovered_from_compaction",
    "summary_artifact": "summary_artifact",
}


@dataclass
class TranscriptWindow:
    messages: list[MessageView]
    start: int
    end: int  # exclusive
    total: int

    @property
    def has_earlier(self) -> bool:
        return self.start > 0

    @property
    def previous_start(self) -> int:
        return max(0, self.start - (self.end - self.start if self.has_later else WINDOW))

    @property
    def has_later(self) -> bool:
        return self.end < self.total


def window_start_for(position: int | None, window: int | None = None) -> int:
    """The start of the window that holds `position` (windows are aligned so permalinks are stable)."""
    window = window or WINDOW
    if position is None or position < 0:
        return 0
    return (position // window) * window


def read_window(
    conversation: Conversation,
    start: int,
    *,
    mask: Mask,
    unmasked_positions: frozenset[int] = frozenset(),
    window: int | None = None,
) -> TranscriptWindow:
    """Messages at positions [start, start + window) laid out for reading, credentials masked."""
    window = window or WINDOW
    tenant = conversation.tenant
    rows = list(
        scoped(TranscriptEntry, tenant)
        .filter(
            conversation=conversation,
            # Joined rows name the tenant too: the join then stays in the tenant's partition (or Citus shard).
            message__tenant=tenant,
            run__tenant=tenant,
            position__gte=max(0, start - PAIRING_MARGIN),
            position__lt=start + window + PAIRING_MARGIN,
        )
        .order_by("position", "-summary_artifact", "pk")
        .values_list(*_ENTRY_COLUMNS.values(), "message__data")
    )
    # One validation of a JSON list is much cheaper than one per message.
    messages = ModelMessagesTypeAdapter.validate_json(join_messages(row[-1] for row in rows)) if rows else []
    entries = [
        EntryInput(message=message, **dict(zip(_ENTRY_COLUMNS, row[:-1], strict=True)))
        for row, message in zip(rows, messages, strict=True)
    ]
    total = conversation.message_count
    if not total:
        total = scoped(TranscriptEntry, tenant).filter(conversation=conversation, summary_artifact=False).count()
    laid_out = lay_out(entries, mask=mask, unmasked_positions=unmasked_positions)
    return TranscriptWindow(
        messages=[m for m in laid_out if start <= m.position < start + window],
        start=start,
        end=min(start + window, total),
        total=total,
    )
