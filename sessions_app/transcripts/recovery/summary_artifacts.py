"""Compaction artifacts: the summaries and receipts compaction writes into a history (pure).

Both are written by compaction about the conversation, not by its participants: recovery keeps them aside,
flagged, never as part of the transcript proper. pydantic-ai-harness is not needed: its two summary recognizers
are re-implemented here so the product runs without it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponsePart,
    SystemPromptPart,
    TextContent,
    UserPromptPart,
)

SUMMARY_METADATA_KEY = "pydantic-ai-harness.compaction.summary.v1"
"""`CompactionPart.metadata` key that marks a summary `SummarizingCompaction` wrote (harness 0.62)."""

RECEIPT_METADATA = "pydantic-ai-harness.compaction.receipt.v1"
"""`TextContent.metadata` marking the receipt a compaction with `receipts=True` leaves (harness 0.62)."""

LEGACY_SUMMARY_PREFIX = "Summary of previous conversation:\n\n"
"""How older `SummarizingCompaction` versions opened the summary system prompt they inserted.

The full literal, blank line included, as the harness matches it: a user-authored system prompt that merely
opens with the same sentence stays part of the transcript.
"""


def is_summary_part(part: ModelRequestPart | ModelResponsePart) -> bool:
    """Whether `part` is a compaction summary: the harness's marked `CompactionPart` or a legacy summary.

    A `CompactionPart` an application or a provider wrote itself (provider data, an id) is ordinary content.
    """
    if isinstance(part, CompactionPart):
        return (
            part.metadata is not None
            and part.metadata.get(SUMMARY_METADATA_KEY) is True
            and part.provider_name is None
            and part.id is None
            and part.provider_details is None
            and bool(part.content)
        )
    return isinstance(part, SystemPromptPart) and part.content.startswith(LEGACY_SUMMARY_PREFIX)


def is_receipt_part(part: ModelRequestPart | ModelResponsePart) -> bool:
    """Whether `part` is the receipt a compaction with `receipts=True` left ("[History before this point...").

    Marked by metadata on a text item of a `UserPromptPart`, invisible to the model (harness 0.62).
    """
    return (
        isinstance(part, UserPromptPart)
        and not isinstance(part.content, str)
        and any(isinstance(item, TextContent) and item.metadata == RECEIPT_METADATA for item in part.content)
    )


def _is_artifact_part(part: ModelRequestPart) -> bool:
    return is_summary_part(part) or is_receipt_part(part)


def is_summary_artifact(message: ModelMessage) -> bool:
    """Whether `message` carries a compaction summary or receipt (possibly merged with real parts).

    Both are written by compaction about the conversation, not by its participants: kept aside, never part of
    the transcript proper.
    """
    return isinstance(message, ModelRequest) and any(_is_artifact_part(p) for p in message.parts)


def split_summary_artifact(message: ModelMessage) -> tuple[ModelRequest | None, ModelMessage | None]:
    """`(summary-only request or None, the rest or None)`.

    Continuing a history merges the summary's request with real turns next to it, so the split is by part.
    """
    if not isinstance(message, ModelRequest) or not is_summary_artifact(message):
        return None, message
    summary = [p for p in message.parts if _is_artifact_part(p)]
    rest = [p for p in message.parts if not _is_artifact_part(p)]
    return replace(message, parts=summary), (replace(message, parts=rest) if rest else None)


def without_summary_artifacts(messages: Iterable[ModelMessage]) -> list[ModelMessage]:
    """`messages` without summary and receipt parts; a request left with nothing else is dropped."""
    out: list[ModelMessage] = []
    for message in messages:
        _, rest = split_summary_artifact(message)
        if rest is not None:
            out.append(rest)
    return out
