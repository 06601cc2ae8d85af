"""One message at a time through pydantic-ai's own adapter, so stored bytes load back unchanged."""

import hashlib
from collections.abc import Iterable

from pydantic import TypeAdapter
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

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
    """Validate plain JSON data (a list) into messages; raises pydantic.ValidationError."""
    return ModelMessagesTypeAdapter.validate_python(data)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
