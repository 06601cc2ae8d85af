"""`ordered_message_ids` reads each snapshot's message ids in position order, as its rows give them, on every
database."""

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import SnapshotMessage
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
