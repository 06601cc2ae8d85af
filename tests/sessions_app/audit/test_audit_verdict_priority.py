"""The verdict is the first failing gate in SPEC section 3's priority; every finding is kept."""

import pytest

from sessions_app.audit import gates, vocabulary
from sessions_app.audit.vocabulary import ContractKind, Verdict
from tests.sessions_app.audit.audit_cases import (
    context_for,
    history_with_orphan_result,
    history_without_system_prompt,
    interrupted_history,
    mailer_history,
    mixed_conversation_history,
)


def test_no_finding_means_ready():
    assert vocabulary.decide_verdict([]) == Verdict.READY


def test_each_code_outranks_every_code_after_it():
    for index, code in enumerate(vocabulary.PRIORITY):
        assert vocabulary.decide_verdict([*vocabulary.PRIORITY[index:]][::-1]) == code


def test_an_unknown_code_is_refused():
    with pytest.raises(ValueError, match="Unknown finding code"):
        vocabulary.decide_verdict(["SLIGHTLY ODD"])


def _report(messages, **overrides):
    return gates.run_gates(context_for(messages, **overrides))


def test_client_supplied_history_with_mixed_ids_is_untrusted_first_and_keeps_both_findings():
    messages = mixed_conversation_history()
    report = _report(
        messages, sources=frozenset({"client"}), owned_conversation_ids=frozenset({"conv-a", "conv-b"})
    )
    assert report.verdict == Verdict.UNTRUSTED_HISTORY
    assert [f.code for f in report.findings] == [Verdict.UNTRUSTED_HISTORY, Verdict.SCOPE_DRIFT]


def test_scope_drift_outranks_a_missing_system_prompt():
    messages = history_without_system_prompt("run-1")
    report = _report(messages, run_id="run-1")
    assert report.verdict == Verdict.SCOPE_DRIFT
    assert {f.code for f in report.findings} == {Verdict.SCOPE_DRIFT, Verdict.SYSTEM_PROMPT_GAP}


def test_a_missing_system_prompt_outranks_an_interrupted_tool():
    report = _report(
        interrupted_history(), prompt_contract=gates.PromptContractFact(ContractKind.LABEL, "v9")
    )
    assert report.verdict == Verdict.SYSTEM_PROMPT_GAP
    assert [f.code for f in report.findings] == [Verdict.SYSTEM_PROMPT_GAP, Verdict.INTERRUPTED_TOOL]


def test_an_interrupted_tool_outranks_a_missing_receipt():
    report = _report(interrupted_history(), receipts=())
    assert report.verdict == Verdict.INTERRUPTED_TOOL
    assert [f.code for f in report.findings] == [Verdict.INTERRUPTED_TOOL, Verdict.MISSING_OUTCOME_RECEIPT]


def test_an_orphan_removal_outranks_a_missing_receipt_but_not_a_round_trip_mismatch():
    messages = history_with_orphan_result()
    assert _report(messages, receipts=()).verdict == Verdict.ORPHAN_RESULT_REMOVED
    stored = list(gates.stored_form(messages))
    stored[0] = stored[0].replace('"kind"', '"forged_flag": true, "kind"', 1)
    report = _report(messages, receipts=(), stored_messages=tuple(stored))
    assert report.verdict == Verdict.ROUND_TRIP_MISMATCH
    assert [f.code for f in report.findings] == [
        Verdict.ROUND_TRIP_MISMATCH,
        Verdict.ORPHAN_RESULT_REMOVED,
        Verdict.MISSING_OUTCOME_RECEIPT,
    ]


def test_a_clean_history_with_an_outcome_receipt_is_ready():
    assert _report(mailer_history()).verdict == Verdict.READY
