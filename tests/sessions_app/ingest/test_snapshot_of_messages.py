"""A traced run's snapshot is made of its validated messages, not of their dump: inherited copies kept in the memo
are taken as they are, only the run's own messages are dumped and checked, and the payload is the one
`parse_snapshot` makes of the whole dump (messages, digest, refusals)."""

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, UserPromptPart

from sessions_app.ingest import payloads
from sessions_app.ingest.message_memo import MEMO
from sessions_app.ingest.payloads import IngestError, parse_snapshot, snapshot_of_messages
from tests.agents import weather_agent

FIELDS = {"conversation_id": "c", "run_id": "r2", "state": "complete", "started_at": "2026-12-06T01:00:00+00:00"}


def threaded_history(runs: int) -> list:
    agent, history = weather_agent(), None
    for n in range(runs):
        history = agent.run_sync(f"Weather, question {n}?", message_history=history).all_messages()
    return history


@pytest.mark.parametrize("kept", [0, 4, 12, 20])
def test_the_payload_is_the_one_parse_snapshot_makes_of_the_dump(kept):
    MEMO.clear()
    history = threaded_history(5)
    dumped = ModelMessagesTypeAdapter.dump_python(history, mode="json")
    inherited = parse_snapshot({**FIELDS, "messages": dumped[:kept]}).messages
    assert None not in MEMO.of_each(inherited)  # kept, as a stored transcript's copies are
    messages = [*inherited, *ModelMessagesTypeAdapter.validate_python(dumped[kept:])]

    made = snapshot_of_messages(FIELDS, messages)
    parsed = parse_snapshot({**FIELDS, "messages": dumped})

    assert made == parsed
    assert made.sent_digest == parsed.sent_digest
    assert all(a is b for a, b in zip(made.messages, inherited, strict=False))


def test_only_the_messages_not_kept_are_dumped(monkeypatch):
    MEMO.clear()
    history = threaded_history(50)
    inherited = parse_snapshot(
        {**FIELDS, "messages": ModelMessagesTypeAdapter.dump_python(history[:-4], mode="json")}
    ).messages
    own = ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(history[-4:], mode="json"))
    dumped: list[int] = []

    class CountingAdapter:
        def dump_python(self, messages, **options):
            dumped.append(len(messages))
            return ModelMessagesTypeAdapter.dump_python(messages, **options)

    monkeypatch.setattr(payloads, "ModelMessagesTypeAdapter", CountingAdapter())
    made = snapshot_of_messages(FIELDS, [*inherited, *own])
    assert dumped == [4]
    assert len(made.messages) == 200


def test_a_message_not_kept_is_checked_like_a_posts():
    MEMO.clear()
    unsafe = ModelRequest(parts=[UserPromptPart("hello\x00")])
    with pytest.raises(IngestError, match=r"'messages\[0\]\.parts\[0\]\.content' .*NUL"):
        snapshot_of_messages(FIELDS, [unsafe])
    with pytest.raises(IngestError, match="'run_id'"):
        snapshot_of_messages({**FIELDS, "run_id": "a/b"}, [])
