"""Gate 1 remembers the stored bytes it found clean (by sha256), so a run's next snapshot, which repeats the whole
history, examines only the messages not seen clean before; the findings equal a from-scratch audit's."""

import json

from sessions_app.audit import gates
from sessions_app.audit.gates import round_trip
from tests.sessions_app.audit.audit_cases import context_for, mailer_history


def _tampered(stored: list[str], index: int) -> list[str]:
    data = json.loads(stored[index])
    data["parts"][0]["approved_by"] = "finance-lead"
    return [*stored[:index], json.dumps(data), *stored[index + 1 :]]


def _from_scratch(messages, stored):
    round_trip.CLEAN.clear()
    return gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored)))


def test_a_repeated_history_is_examined_only_for_its_new_messages(monkeypatch):
    messages = mailer_history()
    stored = list(gates.stored_form(messages))
    round_trip.CLEAN.clear()
    assert gates.check_round_trip(messages[:-1], context_for(messages[:-1], stored_messages=tuple(stored[:-1]))) == []
    parsed = []
    real_loads = round_trip.json.loads
    monkeypatch.setattr(round_trip.json, "loads", lambda raw: parsed.append(raw) or real_loads(raw))
    assert gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored))) == []
    assert parsed == [stored[-1]]


def test_a_mismatch_is_reported_on_every_audit_and_the_findings_equal_a_from_scratch_audit():
    messages = mailer_history()
    clean = list(gates.stored_form(messages))
    for bad in range(len(messages)):
        stored = _tampered(clean, bad)
        expected = _from_scratch(messages, stored)
        assert len(expected) == 1
        round_trip.CLEAN.clear()
        gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(clean)))  # all kept clean
        for _ in range(2):
            again = gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored)))
            assert again == expected
        # Prefixes audited first, as a growing run's snapshots are.
        round_trip.CLEAN.clear()
        for end in range(1, len(messages) + 1):
            found = gates.check_round_trip(
                messages[:end], context_for(messages[:end], stored_messages=tuple(stored[:end]))
            )
            assert found == _from_scratch_keep(messages[:end], stored[:end], found)


def _from_scratch_keep(messages, stored, found):
    """A from-scratch audit of the same input, with the memo as it was (so the loop goes on from it)."""
    kept = round_trip.CLEAN._items.copy()
    try:
        return _from_scratch(messages, stored)
    finally:
        round_trip.CLEAN._items.clear()
        round_trip.CLEAN._items.update(kept)


def test_unreadable_bytes_are_never_kept():
    messages = mailer_history()
    stored = [*gates.stored_form(messages), "{not json"]
    round_trip.CLEAN.clear()
    first = gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored)))
    second = gates.check_round_trip(messages, context_for(messages, stored_messages=tuple(stored)))
    assert first == second and "is not JSON" in first[-1].detail
