"""Gate 1: the stored history must survive ModelMessagesTypeAdapter dump, validate, normalize, hash."""

import json

from sessions_app.audit import gates
from sessions_app.audit.vocabulary import Verdict
from tests.sessions_app.audit.audit_cases import RECIPIENT, context_for, mailer_history


def test_a_history_stored_through_the_adapter_round_trips():
    messages = mailer_history()
    assert gates.check_round_trip(messages, context_for(messages)) == []


def test_key_order_whitespace_and_explicit_nulls_are_normalized_away():
    messages = mailer_history()
    stored = []
    for raw in gates.stored_form(messages):
        data = json.loads(raw)
        data["provider_details_extra_null"] = None
        stored.append(json.dumps(dict(reversed(list(data.items()))), indent=3))
    assert gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored))) == []


def test_a_field_the_adapter_drops_is_a_mismatch_named_by_path():
    messages = mailer_history()
    stored = list(gates.stored_form(messages))
    tampered = json.loads(stored[1])
    tampered["parts"][0]["approved_by"] = "finance-lead"
    stored[1] = json.dumps(tampered)
    (finding,) = gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored)))
    assert finding.code == Verdict.ROUND_TRIP_MISMATCH
    assert "Stored message 1" in finding.detail
    assert ".parts[0].approved_by (dropped by the adapter)" in finding.detail
    assert "finance-lead" not in finding.detail


def test_a_message_that_does_not_validate_is_a_mismatch_without_its_content():
    messages = mailer_history()
    stored = list(gates.stored_form(messages))
    broken = json.loads(stored[1])
    broken["parts"][0]["part_kind"] = "smuggled"
    stored[1] = json.dumps(broken)
    stored.append("{not json")
    findings = gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored)))
    assert [f.code for f in findings] == [Verdict.ROUND_TRIP_MISMATCH, Verdict.ROUND_TRIP_MISMATCH]
    assert "does not validate as a ModelMessage" in findings[0].detail
    assert "is not JSON" in findings[1].detail
    assert all(RECIPIENT not in f.detail for f in findings)


def test_the_finding_key_is_the_same_on_every_audit_of_the_same_bytes():
    messages = mailer_history()
    stored = list(gates.stored_form(messages))
    stored[0] = stored[0].replace('"kind"', '"extra": 1, "kind"', 1)
    ctx = context_for(messages, stored_messages=tuple(stored))
    first, second = gates.check_round_trip(messages, ctx), gates.check_round_trip(messages, ctx)
    assert len(first) == 1
    assert [f.key for f in first] == [f.key for f in second]
