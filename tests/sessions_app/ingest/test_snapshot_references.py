"""A snapshot's history is stored as its ordered message ids on its own row, and the per-message reference rows
(`SnapshotMessage`, the index by message that retention reads) are written only for the messages the
conversation's newest snapshot did not name: a thread that sends its whole history each step writes its new
messages, while every message any snapshot names keeps a row in its conversation."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart

from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Conversation, Snapshot, SnapshotMessage, StoredMessage
from sessions_app.transcripts import fold_cache
from sessions_app.transcripts.snapshots import diff_between
from sessions_app.transcripts.store import delete_conversations
from tests.agents import weather_agent

WHEN = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def _post(tenant, conversation_id: str, run_id: str, messages, **fields) -> None:
    body = {
        "conversation_id": conversation_id,
        "run_id": run_id,
        "messages": ModelMessagesTypeAdapter.dump_python(list(messages), mode="json"),
        **fields,
    }
    ingest_snapshots(tenant, [parse_snapshot(body)], source="server", via="api")


def _thread(tenant, runs: int, *, forget_folds: bool = False) -> list[list]:
    agent, history, histories = weather_agent(), None, []
    for n in range(runs):
        if forget_folds:
            fold_cache.forget_all()  # as a process that never saw the conversation: the newest is read back
        history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
        histories.append(history)
        _post(tenant, "thread", f"r{n}", history)
    return histories


def _named_rows(tenant, conversation: Conversation) -> set[int]:
    rows = SnapshotMessage.objects.filter(tenant=tenant, snapshot__run__conversation=conversation)
    return set(rows.values_list("message_id", flat=True))


def _every_named_message_has_a_row_in_its_conversation(tenant) -> None:
    for conversation in Conversation.objects.filter(tenant=tenant):
        named = {
            message_id
            for ids in Snapshot.objects.filter(tenant=tenant, run__conversation=conversation).values_list(
                "message_ids", flat=True
            )
            for message_id in ids
        }
        assert named <= _named_rows(tenant, conversation), conversation.external_id


@pytest.mark.django_db
@pytest.mark.parametrize("forget_folds", [False, True], ids=["kept fold", "read back"])
def test_each_snapshot_holds_its_history_in_order_and_rows_only_name_new_messages(tenant, forget_folds):
    histories = _thread(tenant, 6, forget_folds=forget_folds)

    sha_of = dict(StoredMessage.objects.filter(tenant=tenant).values_list("id", "data"))
    snapshots = list(Snapshot.objects.filter(tenant=tenant).order_by("id"))
    assert [len(snapshot.message_ids) for snapshot in snapshots] == [len(h) for h in histories]
    for snapshot, history in zip(snapshots, histories, strict=True):
        stored = [ModelMessagesTypeAdapter.validate_json(f"[{sha_of[i]}]")[0] for i in snapshot.message_ids]
        assert [type(m) for m in stored] == [type(m) for m in history]
        assert [m.parts[0].part_kind for m in stored] == [m.parts[0].part_kind for m in history]
    # A row per distinct message of the thread, not one per message per snapshot (4 + 8 + ... + 24 = 84).
    distinct = len(set(snapshots[-1].message_ids))
    assert SnapshotMessage.objects.filter(tenant=tenant).count() == distinct == StoredMessage.objects.count()
    assert distinct > 4 * len(histories) // 2
    _every_named_message_has_a_row_in_its_conversation(tenant)


@pytest.mark.django_db
def test_a_late_earlier_step_and_a_fork_still_leave_a_row_for_every_message_they_name(tenant):
    ask = ModelRequest(parts=[UserPromptPart("Weather in Oslo?", timestamp=WHEN)], timestamp=WHEN)
    sunny = ModelResponse(parts=[TextPart("Sunny.")], timestamp=WHEN)
    rainy = ModelResponse(parts=[TextPart("Rainy, take a coat.")], timestamp=WHEN)
    again = ModelRequest(parts=[UserPromptPart("And tomorrow?", timestamp=WHEN)], timestamp=WHEN)
    _post(tenant, "c", "r1", [ask, sunny, again], step=2)
    _post(tenant, "c", "r1", [ask, rainy], step=1)  # arrives late, with a message no snapshot named
    _post(tenant, "c", "r2", [ask, rainy, again, replace(sunny, parts=[TextPart("Cloudy.")])])

    _every_named_message_has_a_row_in_its_conversation(tenant)


@pytest.mark.django_db
def test_deleting_a_conversation_keeps_a_message_only_another_conversations_snapshot_names(tenant):
    """Conversation b names the shared answer only in an interrupted snapshot (never in its transcript): its row
    keeps it when conversation a, which shows it, is deleted."""
    ask = ModelRequest(parts=[UserPromptPart("Weather in Oslo?", timestamp=WHEN)], timestamp=WHEN)
    shared = ModelResponse(parts=[TextPart("Sunny.")], timestamp=WHEN)
    _post(tenant, "a", "a1", [ask, shared])
    _post(tenant, "b", "b1", [ask])
    _post(tenant, "b", "b1", [ask, shared], step=2, state="interrupted")
    interrupted = Snapshot.objects.get(tenant=tenant, run__run_id="b1", state="interrupted")

    delete_conversations(Conversation.objects.filter(tenant=tenant, external_id="a"))

    assert set(interrupted.message_ids) <= set(StoredMessage.objects.filter(tenant=tenant).values_list("id", flat=True))
    rows = diff_between(None, interrupted, lambda text: text).rows
    assert [message.text for row in rows for message in row.messages][-1] == "Sunny."
