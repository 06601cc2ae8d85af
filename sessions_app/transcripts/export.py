"""Transcripts out, streamed: memory stays flat however long the conversation.

`json` is ModelMessagesTypeAdapter JSON built from the stored bytes (pydantic-ai loads it back unchanged),
`jsonl` one message per line with its provenance, `markdown` a readable transcript with credentials masked.
"""

import json
from collections.abc import Collection, Iterable, Iterator
from datetime import datetime

from sessions_app.models import Conversation, TranscriptEntry
from sessions_app.transcripts.masking import masker_for

FORMATS = ("json", "jsonl", "markdown")
CONTENT_TYPES = {"json": "application/json", "jsonl": "application/x-ndjson", "markdown": "text/markdown"}
FILE_SUFFIXES = {"json": "json", "jsonl": "jsonl", "markdown": "md"}


# position, run id, role, timestamp, text, stored message JSON
_Row = tuple[int, str, str, datetime | None, str, str]


def _entries(conversation: Conversation, without_runs: Collection[int] = ()) -> Iterator[_Row]:
    return (
        TranscriptEntry.objects.filter(
            tenant_id=conversation.tenant_id,
            conversation=conversation,
            summary_artifact=False,
            message__tenant_id=conversation.tenant_id,
        )
        .exclude(run_id__in=list(without_runs))
        .order_by("position")
        .values_list("position", "run__run_id", "role", "timestamp", "text", "message__data")
        .iterator(chunk_size=2000)
    )


def _json(conversation: Conversation, without_runs: Collection[int] = ()) -> Iterator[str]:
    yield "["
    for i, (*_, data) in enumerate(_entries(conversation, without_runs)):
        yield data if i == 0 else "," + data
    yield "]"


def _jsonl(conversation: Conversation) -> Iterator[str]:
    for position, run_id, role, timestamp, _, data in _entries(conversation):
        head = json.dumps(
            {
                "conversation_id": conversation.external_id,
                "position": position,
                "run_id": run_id,
                "role": role,
                "timestamp": timestamp.isoformat() if timestamp else None,
            }
        )
        yield f'{head[:-1]}, "message": {data}}}\n'


def _markdown(conversation: Conversation) -> Iterator[str]:
    # For reading: credentials are masked as on every page (json/jsonl stay byte-exact for reloading).
    mask = masker_for(conversation.tenant)
    yield f"# Conversation {conversation.external_id}\n\n"
    for position, run_id, role, timestamp, raw_text, _ in _entries(conversation):
        text = mask(raw_text)
        when = f" · {timestamp:%Y-%m-%d %H:%M:%S} UTC" if timestamp else ""
        yield f"## {position} · {role}{when}\n\n_run {run_id}_\n\n"
        fence = "````" if "```" in text else "```"
        yield f"{fence}\n{text}\n{fence}\n\n"


_WRITERS = {"json": _json, "jsonl": _jsonl, "markdown": _markdown}


def history_json(conversation: Conversation, without_runs: Collection[int]) -> str:
    """The recovered transcript as ModelMessagesTypeAdapter JSON, leaving out the messages of `without_runs`
    (primary keys): what a replay resumes from, without the runs it quarantined."""
    return "".join(_json(conversation, without_runs))


def export_conversation(conversation: Conversation, fmt: str) -> Iterator[str]:
    if fmt not in _WRITERS:
        raise ValueError(f"Unknown export format {fmt!r}; use one of {', '.join(FORMATS)}.")
    return _WRITERS[fmt](conversation)


def export_conversations(conversations: Iterable[Conversation], fmt: str) -> Iterator[str]:
    """Several conversations: JSON as a list of {conversation_id, messages}, the others concatenated."""
    if fmt not in _WRITERS:
        raise ValueError(f"Unknown export format {fmt!r}; use one of {', '.join(FORMATS)}.")
    if fmt != "json":
        for conversation in conversations:
            yield from _WRITERS[fmt](conversation)
        return
    yield "["
    for i, conversation in enumerate(conversations):
        yield ("," if i else "") + json.dumps({"conversation_id": conversation.external_id})[:-1] + ', "messages": '
        yield from _json(conversation)
        yield "}"
    yield "]"
