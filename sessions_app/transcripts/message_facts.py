"""What a timeline needs to know of a message, without its content: kind, time, model, token usage, and per part
its kind, tool call id, tool name and time. Pure.

Taken once, when a transcript row is written, so a page that lays out hundreds of runs reads a few hundred bytes
per message instead of parsing every message body. The shape is the message's own JSON with content left out,
so code reading facts reads them as it would read the message.
"""

from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai.messages import ModelMessage

_MESSAGE_KEYS = ("kind", "timestamp", "model_name", "usage", "provider_name", "finish_reason")
_PART_KEYS = ("part_kind", "tool_call_id", "tool_name", "timestamp")
_adapter: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage)


def facts_from_json(message: Mapping[str, Any]) -> dict[str, Any]:
    """The facts of a message given as `ModelMessagesTypeAdapter` JSON (one element)."""
    facts = {key: message[key] for key in _MESSAGE_KEYS if message.get(key) is not None}
    parts = message.get("parts")
    facts["parts"] = [
        {key: part[key] for key in _PART_KEYS if part.get(key) is not None}
        for part in (parts if isinstance(parts, list) else [])
        if isinstance(part, Mapping)
    ]
    return facts


def message_facts(message: ModelMessage) -> dict[str, Any]:
    return facts_from_json(_adapter.dump_python(message, mode="json"))
