"""`ordered_message_ids` reads each snapshot's (or transcript's) message ids in position order, as rows would give
them, on every database; with `contiguous`, a group whose positions have a gap is left out."""

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, SnapshotMessage, TranscriptEntry
from sessions_app.transcripts.run_inputs import ordered_message_ids
from tests.agents import weather_agent


def _rows_by(rows, by: str) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for key, message_id in rows.order_by(by, "position").values_list(by, "message_id"):
        out.setdefault(key, []).append(message_id)
    return out


@pytest.mark.django_db
def test_each_snapshots_ids_come_in_position_order(tenant):
    agent, history = weather_agent(), None
    for n in range(3):
        history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
        body = {
            "conversation_id": "c",
            "run_id": f"r{n}",
            "messages": ModelMessagesTypeAdapter.dump_python(history, mode="json"),
        }
        ingest_snapshots(tenant, [parse_snapshot(body)], source="server", via="api")
    refs = SnapshotMessage.objects.filter(tenant=tenant)

    grouped = ordered_message_ids(refs, "snapshot_id")

    assert grouped == _rows_by(refs, "snapshot_id")
    assert sorted(len(ids) for ids in grouped.values()) == [4, 8, 12]
    assert ordered_message_ids(refs.none(), "snapshot_id") == {}


@pytest.mark.django_db
def test_a_transcript_with_a_gap_is_not_contiguous(tenant):
    history = weather_agent().run_sync("Weather?").all_messages()
    body = {
        "conversation_id": "c",
        "run_id": "r",
        "messages": ModelMessagesTypeAdapter.dump_python(history, mode="json"),
    }
    ingest_snapshots(tenant, [parse_snapshot(body)], source="server", via="api")
    conversation = Conversation.objects.get(tenant=tenant, external_id="c")
    rows = TranscriptEntry.objects.filter(tenant=tenant, conversation=conversation, summary_artifact=False)
    whole = _rows_by(rows, "conversation_id")
    assert ordered_message_ids(rows, "conversation_id", contiguous=True) == whole

    rows.filter(position=1).delete()

    assert ordered_message_ids(rows, "conversation_id", contiguous=True) == {}
    assert ordered_message_ids(rows, "conversation_id") == {
        conversation.pk: [whole[conversation.pk][i] for i in (0, 2, 3)]
    }
