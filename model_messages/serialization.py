"""Messages through pydantic-ai's own adapter, one at a time, so stored bytes load back unchanged; and what a
history says about itself (its conversation id). Pure: the agent-side client uses it too."""

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_core import to_json

_message_adapter: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage)


def dump_message(message: ModelMessage) -> str:
    """The message as one element of ModelMessagesTypeAdapter JSON."""
    return _message_adapter.dump_json(message).decode()


def load_message(data: str | bytes) -> ModelMessage:
    return _message_adapter.validate_json(data)


def join_messages(dumped: Iterable[str]) -> str:
    """A JSON list of already dumped messages: ModelMessagesTypeAdapter JSON without re-serializing."""
    return "[" + ",".join(dumped) + "]"


def validate_messages(data: object) -> list[ModelMessage]:
    """Validate plain JSON data (a list) into messages, as ModelMessagesTypeAdapter reads JSON (bytes as base64, the
    way it writes them; times and durations as ISO 8601), so what is taken is what its JSON schema describes;
    raises pydantic.ValidationError."""
    return ModelMessagesTypeAdapter.validate_json(to_json(data, bytes_mode="base64"))


def messages_json_schema(ref_template: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """ModelMessagesTypeAdapter's JSON schema (validation mode): the list's own schema, and the definitions it
    refers to through `ref_template`."""
    schema = ModelMessagesTypeAdapter.json_schema(ref_template=ref_template, mode="validation")
    definitions = schema.pop("$defs", {})
    return schema, definitions


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def messages_conversation_id(messages: Sequence[ModelMessage]) -> str | None:
    """The conversation id pydantic-ai stamped on the messages (the latest one), if any.

    Falling back to the run id would make a run id a conversation key, which the scope audit rightly flags.
    """
    return next((m.conversation_id for m in reversed(messages) if m.conversation_id), None)


def iso_datetime(value: object) -> datetime | None:
    """An ISO 8601 date-time given as a string, or None for anything else."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
