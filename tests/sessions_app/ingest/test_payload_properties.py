"""Property tests (Hypothesis) for the ingest parser: whatever comes in, the answer is a payload or an IngestError
naming the problem, never another exception; what is accepted is storable and reachable again."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessagesTypeAdapter

from input_errors import RejectedInput
from sessions_app.core.api_input import (
    MAX_JSON_DEPTH,
    decode_json,
    find_unsafe_string,
    unsafe_text_problem,
    walk_for_unsafe_string,
)
from sessions_app.ingest.payloads import IngestError, SnapshotPayload, parse_snapshot, parse_tool_effect
from tests.agents import weather_messages

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MESSAGES = ModelMessagesTypeAdapter.dump_python(weather_messages(), mode="json")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
fields = st.sampled_from(
    [
        "conversation_id",
        "run_id",
        "agent",
        "parent_run_id",
        "step",
        "state",
        "idempotency_key",
        "source",
        "started_at",
        "principal",
        "messages",
    ]
)


def _storable(text: str) -> bool:
    return unsafe_text_problem(text) is None


@FAST
@given(st.dictionaries(fields, json_values, max_size=11) | json_values)
def test_any_json_value_is_a_payload_or_an_ingest_error(data):
    try:
        payload = parse_snapshot(data)
    except IngestError as error:
        assert error.status == 400 and error.message
    else:
        assert isinstance(payload, SnapshotPayload)


@FAST
@given(conversation_id=st.text(max_size=250), run_id=st.text(max_size=250), step=st.integers() | st.none())
def test_accepted_ids_are_storable_reachable_and_kept_exactly(conversation_id, run_id, step):
    body = {"conversation_id": conversation_id, "run_id": run_id, "step": step, "messages": MESSAGES}
    try:
        payload = parse_snapshot(body)
    except IngestError:
        return
    for value in (payload.conversation_id, payload.run_id):
        assert 1 <= len(value) <= 200 and _storable(value)
        assert not any(ord(c) < 32 or ord(c) == 127 for c in value) and value == value.strip()
    assert "/" not in payload.run_id
    assert (payload.conversation_id, payload.run_id) == (conversation_id, run_id)
    assert payload.step is None or 0 <= payload.step < 2**31


@FAST
@given(st.dictionaries(st.sampled_from(["run_id", "tool_call_id", "tool_name", "status", "started_at"]), json_values))
def test_any_tool_effect_is_a_record_or_an_ingest_error(data):
    try:
        effect = parse_tool_effect(data)
    except IngestError:
        return
    assert all(isinstance(v, str) and _storable(v) for v in (effect.run_id, effect.tool_call_id, effect.tool_name))


@FAST
@given(st.binary(max_size=200))
def test_any_bytes_decode_to_json_or_a_rejection(raw):
    try:
        decode_json(raw)
    except RejectedInput as error:
        assert error.status == 400


@settings(max_examples=30, deadline=None)
@given(depth=st.integers(min_value=MAX_JSON_DEPTH + 1, max_value=50_000), opener=st.sampled_from(["[", '{"a":']))
def test_documents_deeper_than_the_bound_are_refused_without_recursion(depth, opener):
    closer = "]" if opener == "[" else "}"
    raw = (opener * depth + ("1" if opener != "[" else "") + closer * depth).encode()
    try:
        decode_json(raw)
    except RejectedInput as error:
        assert "deeper than" in error.message
    else:
        raise AssertionError("a too-deep document was accepted")


@FAST
@given(st.text())
def test_message_text_survives_or_is_refused_for_a_named_reason(text):
    body = {"conversation_id": "c", "run_id": "r", "messages": json.loads(json.dumps(MESSAGES))}
    body["messages"][0]["parts"][-1]["content"] = text
    try:
        payload = parse_snapshot(body)
    except IngestError as error:
        assert not _storable(text) and ("NUL" in error.message or "surrogate" in error.message)
    else:
        assert _storable(text) and payload.messages


unsafe_texts = st.lists(
    st.sampled_from(["a", "\\", "u", "0", "\\u0000", "\x00", "\ud800", "\udfff", "😀"]), max_size=6
).map("".join)
hostile_values = st.recursive(
    st.none() | st.integers() | st.floats(allow_nan=False) | unsafe_texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(unsafe_texts, children, max_size=4),
    max_leaves=20,
)


@FAST
@given(hostile_values)
def test_the_one_pass_check_names_what_the_walk_names(data):
    """NULs, lone surrogates, their escaped lookalikes and astral characters: the fast check lets none through."""
    assert find_unsafe_string(data) == walk_for_unsafe_string(data)


def _no_constants(name: str) -> object:
    raise ValueError(name)


@FAST
@given(hostile_values, st.booleans())
def test_a_body_is_refused_exactly_when_a_string_of_it_cannot_be_stored(data, ascii_escaped):
    """The body's text is looked at before its strings are walked: whichever way a client escapes it (Python's
    default escapes every non-ASCII character, surrogate pairs included), decode_json refuses a body exactly when
    walking every string of it finds one that cannot be stored, and names the same one."""
    try:
        raw = json.dumps(data, ensure_ascii=ascii_escaped).encode()
        parsed = json.loads(raw, parse_constant=_no_constants)
    except (UnicodeEncodeError, ValueError):
        return  # a lone surrogate unescaped is not UTF-8, infinity is not JSON: refused before any of this
    unsafe = walk_for_unsafe_string(parsed)
    try:
        decoded = decode_json(raw)
    except RejectedInput as error:
        assert unsafe is not None
        assert error.message == f"'{unsafe[0]}' {unsafe[1]}."
    else:
        assert unsafe is None
        assert decoded == parsed
