"""ingest/otlp's KnownMessages (pure): a traced run's inherited messages are recognised by their texts exactly as a
lookup per message would, whether the whole known prefix matches at once or a fork ends it early; a copy being
extended for one export leaves the conversation's kept copies as they were."""

import copy

import pytest
from pydantic_core import to_json

from sessions_app.ingest.otlp import KnownMessages, decode_export, trace_key, validate
from tests.sessions_app.ingest.test_otlp_decoding import export


def one_by_one(known: KnownMessages, data, count):
    """The lookup per message: each plain message's first copy after the previous one taken, by `trace_key`."""
    keys = [trace_key(message) for message in known.messages]
    out, after = [], 0
    for plain in data[:count]:
        key = to_json(plain).decode()
        at = next((j for j in range(after, len(keys)) if keys[j] and keys[j] == key), None)
        if at is None:
            break
        out.append(known.messages[at])
        after = at + 1
    return out, after


@pytest.fixture(scope="module")
def thread():
    """Three threaded runs of a real agent (each a tool call and an answer); the known copies of the first two."""
    _, request = export(["Weather?", "And tomorrow?", "And the day after?"])
    first, second, third = decode_export(request).runs
    known = KnownMessages(validate(first))
    known.extend(validate(second)[second.new_message_index :])
    return known, third


def texts_of(data):
    """Each plain message's `to_json`, as a read gives them."""
    return [to_json(message).decode() for message in data]


def test_a_threaded_run_takes_every_known_message_in_order(thread):
    known, third = thread
    assert third.inherited_texts == texts_of(third.messages[: third.new_message_index])
    copies, after = known.inherit_traced(third.inherited_texts)
    assert after == len(known.messages) == third.new_message_index
    assert all(copy is message for copy, message in zip(copies, known.messages, strict=True))
    assert (copies, after) == one_by_one(known, third.messages, third.new_message_index)


def test_a_changed_message_anywhere_ends_the_copies_where_a_lookup_per_message_would(thread):
    known, third = thread
    for position in range(third.new_message_index):
        data = copy.deepcopy(third.messages)
        data[position]["parts"] = [{"type": "text", "content": f"changed at {position}"}]
        copies, after = known.inherit_traced(texts_of(data[: third.new_message_index]))
        assert (copies, after) == one_by_one(known, data, third.new_message_index)
        assert len(copies) == position


@pytest.mark.parametrize("count", [0, 1, 3, 5])
def test_a_run_inheriting_fewer_messages_than_are_known_takes_only_those(thread, count):
    known, third = thread
    copies, after = known.inherit_traced(third.inherited_texts[:count])
    assert (copies, after) == one_by_one(known, third.messages, count)
    assert len(copies) == count


def test_a_copy_and_the_kept_copies_extend_apart(thread):
    known, third = thread
    repeated = texts_of([*third.messages[:4], third.messages[1]])  # the first run's tool call again, after it
    kept = KnownMessages(known.messages[:4])
    extended = kept.copy()
    extended.extend([known.messages[1]])
    assert extended.inherit_traced(repeated) == ([*known.messages[:4], known.messages[1]], 5)
    assert kept.inherit_traced(repeated) == (known.messages[:4], 4)  # the copy's extension is not the kept's
    again = kept.copy()
    kept.extend([known.messages[1]])
    assert kept.inherit_traced(repeated) == ([*known.messages[:4], known.messages[1]], 5)
    assert again.inherit_traced(repeated) == (known.messages[:4], 4)  # nor the kept's extension a copy's
