"""Build conversations, runs and indexed transcript entries directly, the way transcripts.store writes them."""

import itertools
from datetime import UTC, datetime, timedelta

from django.db import transaction
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from model_messages.rendering import message_role, message_text
from model_messages.serialization import dump_message, sha256_text
from search_app import index
from sessions_app.models import Conversation, Run, StoredMessage, Tenant, TranscriptEntry

_counter = itertools.count(1)
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)


def user(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=text)])


def assistant(text: str, thinking: str | None = None) -> ModelResponse:
    parts = [ThinkingPart(content=thinking)] if thinking else []
    return ModelResponse(parts=[*parts, TextPart(content=text)])


def tool_call(name: str, args: dict, call_id: str = "call-1") -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool_name=name, args=args, tool_call_id=call_id)])


def tool_result(name: str, content: str, call_id: str = "call-1") -> ModelRequest:
    return ModelRequest(parts=[ToolReturnPart(tool_name=name, content=content, tool_call_id=call_id)])


def make_conversation(tenant: Tenant, external_id: str | None = None) -> Conversation:
    return Conversation.objects.create(tenant=tenant, external_id=external_id or f"conv-{next(_counter)}")


def make_run(conversation: Conversation, run_id: str | None = None, agent_name: str = "helper") -> Run:
    return Run.objects.create(
        tenant=conversation.tenant,
        conversation=conversation,
        run_id=run_id or f"run-{next(_counter)}",
        agent_name=agent_name,
        started_at=BASE_TIME,
    )


def add_messages(
    run: Run, messages: list[ModelMessage | str], *, start: datetime | None = None
) -> list[TranscriptEntry]:
    """Append messages (plain strings are user prompts) to the run's conversation and index them."""
    conversation = run.conversation
    start = start or BASE_TIME
    with transaction.atomic():
        position = TranscriptEntry.objects.filter(conversation=conversation, summary_artifact=False).count()
        entries = []
        held = []
        for offset, message in enumerate(messages):
            message = user(message) if isinstance(message, str) else message
            held.append(message)
            data = dump_message(message)
            stored, _ = StoredMessage.objects.get_or_create(
                tenant=run.tenant, sha256=sha256_text(data), defaults={"content_hash": sha256_text(data), "data": data}
            )
            entries.append(
                TranscriptEntry(
                    tenant=run.tenant,
                    conversation=conversation,
                    position=position + offset,
                    run=run,
                    message=stored,
                    role=message_role(message),
                    text=message_text(message),
                    timestamp=start + timedelta(minutes=position + offset),
                )
            )
        created = TranscriptEntry.objects.bulk_create(entries)
        index.entries_added(created, held)
        Conversation.objects.filter(pk=conversation.pk).update(message_count=position + len(created))
    return created


def make_conversation_with(
    tenant: Tenant,
    messages: list[ModelMessage | str],
    *,
    external_id: str | None = None,
    run_id: str | None = None,
    agent_name: str = "helper",
) -> tuple[Conversation, Run, list[TranscriptEntry]]:
    conversation = make_conversation(tenant, external_id)
    run = make_run(conversation, run_id, agent_name)
    return conversation, run, add_messages(run, messages)
