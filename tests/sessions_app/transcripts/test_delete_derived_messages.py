"""Deleting conversations deletes every message only they showed: those their snapshots reference and those
recovery derived from them (a compaction summary split from the turn it was merged into, and the turn without
it), and never one another conversation's transcript still shows."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, StoredMessage, TranscriptEntry
from sessions_app.transcripts.recovery.summary_artifacts import LEGACY_SUMMARY_PREFIX
from sessions_app.transcripts.store import delete_conversations

WHEN = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
MERGED = ModelRequest(
    parts=[
        SystemPromptPart(LEGACY_SUMMARY_PREFIX + "The user shared the door code 4417."),
        UserPromptPart("What is the weather in Kraków?", timestamp=WHEN),
    ],
    timestamp=WHEN,
)
TURN = replace(MERGED, parts=MERGED.parts[1:])  # the turn as recovery shows it, without the summary


def _ingest(tenant, conversation_id: str, messages) -> None:
    payload = parse_snapshot(
        {
            "conversation_id": conversation_id,
            "run_id": f"{conversation_id}-run",
            "state": "complete",
            "messages": ModelMessagesTypeAdapter.dump_python(list(messages), mode="json"),
        }
    )
    ingest_snapshots(tenant, [payload], source="server", via="api")


def _stored_texts(tenant) -> list[str]:
    return list(StoredMessage.objects.filter(tenant=tenant).values_list("data", flat=True))


@pytest.mark.django_db
def test_a_deleted_conversation_leaves_no_message_recovery_derived_from_it(tenant):
    _ingest(tenant, "compacted", [MERGED, ModelResponse(parts=[TextPart("Sunny.")], timestamp=WHEN)])
    assert TranscriptEntry.objects.filter(tenant=tenant, summary_artifact=True).count() == 1
    assert len(_stored_texts(tenant)) == 4  # the two sent, and the summary and the turn recovery split apart

    assert delete_conversations(Conversation.objects.filter(tenant=tenant)) == 1

    assert _stored_texts(tenant) == []


@pytest.mark.django_db
def test_a_message_another_transcript_shows_stays_until_that_conversation_goes(tenant):
    _ingest(tenant, "compacted", [MERGED, ModelResponse(parts=[TextPart("Sunny.")], timestamp=WHEN)])
    # A fork sent the turn itself: the same stored row its snapshot references and the first one's transcript shows.
    _ingest(tenant, "fork", [TURN, ModelResponse(parts=[TextPart("Cloudy.")], timestamp=WHEN)])

    assert delete_conversations(Conversation.objects.filter(tenant=tenant, external_id="fork")) == 1

    shown = TranscriptEntry.objects.filter(tenant=tenant, summary_artifact=False).order_by("position")
    assert [entry.text for entry in shown] == ["What is the weather in Kraków?", "Sunny."]
    assert not any("Cloudy." in data for data in _stored_texts(tenant))
    delete_conversations(Conversation.objects.filter(tenant=tenant))
    assert _stored_texts(tenant) == []
