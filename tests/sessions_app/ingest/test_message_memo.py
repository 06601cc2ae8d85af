"""A history sent again at each step: the messages sent before as their exact bytes are the objects validated
then; only the new ones are validated, and a refusal still names the message's place in the whole snapshot."""

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from model_messages.serialization import dump_message
from sessions_app.ingest.message_memo import MessageMemo
from sessions_app.ingest.payloads import IngestError, parse_snapshot
from tests.agents import weather_messages


def body(messages: list) -> dict:
    return {"conversation_id": "memo", "run_id": "memo-run", "messages": messages}


def test_a_history_sent_again_reuses_the_messages_validated_before_byte_for_byte():
    history = ModelMessagesTypeAdapter.dump_python(weather_messages("Memo, first?"), mode="json")
    first = parse_snapshot(body(history[:3]))
    again = parse_snapshot(body(history))
    assert all(a is b for a, b in zip(first.messages, again.messages[:3], strict=True))
    assert [dump_message(m) for m in again.messages] == [
        dump_message(m) for m in ModelMessagesTypeAdapter.validate_python(history)
    ]


def test_a_message_that_validation_fills_in_is_validated_at_every_send():
    message = {"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "no time given"}]}
    first = parse_snapshot(body([message]))
    again = parse_snapshot(body([message]))
    assert first.messages[0] is not again.messages[0]
    assert first.sent_digest == again.sent_digest  # still one snapshot for two identical bodies


def test_a_bad_new_message_after_known_ones_is_named_by_its_place_in_the_snapshot():
    history = ModelMessagesTypeAdapter.dump_python(weather_messages("Memo, second?"), mode="json")
    parse_snapshot(body(history))
    with pytest.raises(IngestError, match=r"messages\[4\]: Input tag .nonsense."):
        parse_snapshot(body([*history, {"kind": "nonsense", "parts": []}]))


def test_a_stored_row_read_twice_is_one_message_and_a_row_that_no_longer_round_trips_is_not_kept():
    memo = MessageMemo()
    stored = dump_message(weather_messages("Memo, stored?")[1])
    first, known = memo.load(stored)
    again, _ = memo.load(stored)
    assert again is first and known is not None and known.dumped == stored
    drifted = stored.replace('"timestamp"', ' "timestamp"', 1)  # same message, other bytes
    message, entry = memo.load(drifted)
    assert entry is None and message is not first and dump_message(message) == stored
