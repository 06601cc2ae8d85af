"""Gate 6: only an outcome receipt proves the effect; a live wait is Verdict.WAITING, an expired one Verdict.STUCK."""

from datetime import timedelta

from sessions_app.audit import gates
from sessions_app.audit.vocabulary import Evidence, Verdict
from tests.sessions_app.audit.audit_cases import context_for, mailer_history


def _codes(**overrides):
    messages = mailer_history()
    return [f.code for f in gates.check_outcome_receipt(messages, context_for(messages, **overrides))]


def _receipt(evidence, effect="invoice-email-sent"):
    return gates.ReceiptFact(effect, evidence)


def test_an_outcome_receipt_passes():
    assert _codes(receipts=(_receipt(Evidence.OUTCOME),)) == []


def test_activity_and_transport_evidence_are_not_proof():
    assert _codes(receipts=()) == [Verdict.MISSING_OUTCOME_RECEIPT]
    assert _codes(receipts=(_receipt(Evidence.ACTIVITY),)) == [Verdict.MISSING_OUTCOME_RECEIPT]
    weak = (_receipt(Evidence.ACTIVITY), _receipt(Evidence.TRANSPORT))
    assert _codes(receipts=weak) == [Verdict.MISSING_OUTCOME_RECEIPT]


def test_every_effect_needs_its_own_outcome():
    messages = mailer_history()
    receipts = (_receipt(Evidence.OUTCOME), _receipt(Evidence.TRANSPORT, effect="ledger-entry-posted"))
    (finding,) = gates.check_outcome_receipt(messages, context_for(messages, receipts=receipts))
    assert "'ledger-entry-posted' has only transport evidence" in finding.detail


def test_a_live_wait_turns_a_missing_receipt_into_waiting():
    messages = mailer_history()
    ctx = context_for(messages, receipts=())
    wait = gates.WaitFact("ops@acme.test", "approve the refund", ctx.now + timedelta(hours=4))
    (finding,) = gates.check_outcome_receipt(messages, context_for(messages, receipts=(), waits=(wait,)))
    assert finding.code == Verdict.WAITING
    assert "ops@acme.test" in finding.detail


def test_after_the_deadline_with_no_outcome_the_run_is_stuck():
    messages = mailer_history()
    now = context_for(messages).now
    wait = gates.WaitFact("ops@acme.test", "approve the refund", now - timedelta(minutes=1))
    assert _codes(receipts=(), waits=(wait,)) == [Verdict.STUCK]
    # An outcome closes the question whatever the wait says.
    assert _codes(receipts=(_receipt(Evidence.OUTCOME),), waits=(wait,)) == []


def test_a_resolved_wait_no_longer_counts():
    now = context_for(mailer_history()).now
    wait = gates.WaitFact("ops", "approve", now + timedelta(hours=1), resolved=True)
    assert _codes(receipts=(), waits=(wait,)) == [Verdict.MISSING_OUTCOME_RECEIPT]


def test_a_history_without_any_model_response_claims_no_effect_yet():
    messages = mailer_history()[:1]
    assert gates.check_outcome_receipt(messages, context_for(messages, receipts=())) == []


def test_a_live_wait_before_any_model_response_is_waiting():
    # The run asked a person before the model answered: resuming now would go past that person.
    messages = mailer_history()[:1]
    ctx = context_for(messages, receipts=())
    wait = gates.WaitFact("ops@acme.test", "approve the refund", ctx.now + timedelta(hours=4))
    (finding,) = gates.check_outcome_receipt(messages, context_for(messages, receipts=(), waits=(wait,)))
    assert finding.code == Verdict.WAITING
    assert "no model response yet" in finding.detail and "ops@acme.test" in finding.detail


def test_an_expired_wait_before_any_model_response_is_stuck():
    messages = mailer_history()[:1]
    now = context_for(messages).now
    wait = gates.WaitFact("ops@acme.test", "approve the refund", now - timedelta(minutes=1))
    (finding,) = gates.check_outcome_receipt(messages, context_for(messages, receipts=(), waits=(wait,)))
    assert finding.code == Verdict.STUCK


def test_a_live_wait_counts_even_when_every_effect_has_an_outcome():
    messages = mailer_history()
    now = context_for(messages).now
    wait = gates.WaitFact("ops", "approve the refund", now + timedelta(hours=1))
    assert _codes(receipts=(_receipt(Evidence.OUTCOME),), waits=(wait,)) == [Verdict.WAITING]


def test_a_deadline_reads_as_every_page_shows_a_time_while_its_key_stays_exact():
    """B14: the finding read 'deadline 2026-12-05T04:06:47.006791+00:00' beside '2026-12-05 04:06 UTC'."""
    from datetime import datetime, timezone

    messages = mailer_history()
    now = context_for(messages).now
    deadline = datetime(2099, 12, 5, 5, 6, 47, 6791, tzinfo=timezone(timedelta(hours=1)))
    wait = gates.WaitFact("ops@acme.test", "approve the refund", deadline)
    ctx = context_for(messages, receipts=(), waits=(wait,), now=now)
    (finding,) = gates.check_outcome_receipt(messages, ctx)
    assert "(deadline 2099-12-05 04:06 UTC)" in finding.detail
    assert "T0" not in finding.detail and "+0" not in finding.detail
    assert finding.key == f"waiting:{deadline.isoformat()}"
