"""Gate 4: pydantic-ai's own repair_messages, diffed: dropped orphan results and synthesized interrupted returns."""

from pydantic_ai.messages import ModelRequest, UserPromptPart, repair_messages

from sessions_app.audit import gates
from sessions_app.audit.digests import hash_tool_call_id
from sessions_app.audit.vocabulary import EventClass, Verdict
from tests.sessions_app.audit.audit_cases import (
    ARGUMENT_MARKERS,
    CARD_CALL_ID,
    MAIL_CALL_ID,
    RESULT_MARKERS,
    context_for,
    history_with_orphan_result,
    interrupted_history,
    mailer_history,
)


def test_a_settled_history_needs_no_repair():
    messages = mailer_history()
    assert gates.check_tool_pairing(messages, context_for(messages)) == []


def test_merging_adjacent_requests_is_normalization_not_a_finding():
    messages = mailer_history()
    messages.insert(1, ModelRequest(parts=[UserPromptPart("also cc finance")], conversation_id="conv-a"))
    assert len(repair_messages(messages)) < len(messages)
    assert gates.check_tool_pairing(messages, context_for(messages)) == []


def test_a_crashed_tool_call_is_an_interrupted_finding_with_its_hashed_id():
    messages = interrupted_history()
    (finding,) = gates.check_tool_pairing(messages, context_for(messages))
    assert finding.code == Verdict.INTERRUPTED_TOOL
    assert finding.event_class == EventClass.INTERRUPTED_SYNTHESIZED
    assert finding.tool_name == "charge_card"
    assert finding.tool_call_hash == hash_tool_call_id(CARD_CALL_ID)
    assert CARD_CALL_ID not in finding.tool_call_hash
    assert "not a retry order" in finding.guidance
    assert "idempotency key" in finding.guidance


def test_the_ledger_says_whether_the_interrupted_tool_had_started():
    messages = interrupted_history()

    def detail(effects):
        return gates.check_tool_pairing(messages, context_for(messages, tool_effects=effects))[0].detail

    assert "side effect may exist" in detail({CARD_CALL_ID: "started"})
    assert "never started" in detail({"some-other-call": "completed"})
    assert "probably exists" in detail({CARD_CALL_ID: "completed"})
    assert "whether it started is unknown" in detail(None)


def test_an_orphan_result_is_a_removal_finding_with_its_hashed_id():
    messages = history_with_orphan_result()
    (finding,) = gates.check_tool_pairing(messages, context_for(messages))
    assert finding.code == Verdict.ORPHAN_RESULT_REMOVED
    assert finding.event_class == EventClass.ORPHAN_REMOVED
    assert finding.tool_call_hash == hash_tool_call_id(MAIL_CALL_ID)
    assert "audit record" in finding.guidance


def test_a_history_stored_after_an_earlier_repair_still_shows_the_interrupted_call():
    repaired = repair_messages(interrupted_history())
    (finding,) = gates.check_tool_pairing(repaired, context_for(repaired))
    assert finding.code == Verdict.INTERRUPTED_TOOL
    assert "earlier repair" in finding.detail


def test_findings_never_carry_tool_arguments_or_results():
    for messages in (interrupted_history(), history_with_orphan_result()):
        for finding in gates.check_tool_pairing(messages, context_for(messages)):
            text = repr(finding.as_dict())
            assert not any(marker in text for marker in ARGUMENT_MARKERS + RESULT_MARKERS)
