"""Receipts, waits, prompt contracts and merges: stored content-minimal, re-audit what they touch, refuse bad
input without changing anything."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions_app.audit import events, evidence, service
from sessions_app.audit.digests import hash_resume_token, prompt_sha256
from sessions_app.audit.inputs import AuditInputError
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import (
    AuditEvent,
    ConversationMerge,
    PromptContract,
    Receipt,
    RunVerdict,
    Tenant,
    Wait,
)
from tests.sessions_app.audit.audit_cases import (
    SYSTEM_PROMPT,
    history_without_system_prompt,
    ingest,
    mailer_history,
    mixed_conversation_history,
    outcome_receipt,
)


def _counts():
    return tuple(
        m.objects.count() for m in (Receipt, Wait, PromptContract, ConversationMerge, AuditEvent, RunVerdict)
    )


def _verdict(run):
    return RunVerdict.objects.get(run=run).verdict


def test_an_outcome_receipt_makes_the_stored_verdict_ready(tenant):
    run = ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    assert _verdict(run) == Verdict.MISSING_OUTCOME_RECEIPT
    evidence.add_receipt(tenant, {**outcome_receipt("r-1"), "evidence": "transport"})
    assert _verdict(run) == Verdict.MISSING_OUTCOME_RECEIPT
    receipt, report = evidence.add_receipt(tenant, outcome_receipt("r-1"))
    assert report.verdict == Verdict.READY == _verdict(run)
    assert (receipt.evidence, receipt.reference) == ("outcome", "sha256:5f1c0e")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"evidence": "vibes"}, "'evidence' must be one of activity, transport, outcome"),
        ({"effect": ""}, "'effect' is required"),
        ({"checked_by": 7}, "'checked_by' must be a string"),
        ({"reference": "x" * 501}, "'reference' is longer than 500 characters"),
        ({"reference": "line one\nline two"}, "'reference' must be a single line"),
        ({"run_id": "r-missing"}, "No run 'r-missing' in this tenant"),
    ],
)
def test_a_bad_receipt_is_refused_with_its_problem_named_and_nothing_changes(tenant, change, message):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    before = _counts()
    with pytest.raises(AuditInputError, match=message):
        evidence.add_receipt(tenant, {**outcome_receipt("r-1"), **change})
    assert _counts() == before


def test_another_tenants_run_answers_like_a_missing_one(tenant, other_tenant):
    ingest(other_tenant, mailer_history("c-1"), run_id="r-theirs", conversation_id="c-1")
    with pytest.raises(AuditInputError) as theirs:
        evidence.add_receipt(tenant, outcome_receipt("r-theirs"))
    with pytest.raises(AuditInputError) as missing:
        evidence.add_receipt(tenant, outcome_receipt("r-nowhere"))
    assert theirs.value.status == missing.value.status == 404
    assert str(theirs.value).replace("r-theirs", "X") == str(missing.value).replace("r-nowhere", "X")


def test_a_wait_stores_only_a_hash_of_its_resume_token(tenant):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    deadline = (timezone.now() + timedelta(days=1)).isoformat()
    token = "resume-me-please-0123456789"
    data = {"run_id": "r-1", "owner": "ops", "decision": "approve refund", "deadline": deadline}
    wait, generated, report = evidence.add_wait(tenant, {**data, "resume_token": token})
    assert generated is None and report.verdict == Verdict.WAITING
    assert wait.resume_token_hash == hash_resume_token(token) and token not in repr(
        Wait.objects.values().get()
    )
    second, generated, _ = evidence.add_wait(tenant, data)
    assert generated and second.resume_token_hash == hash_resume_token(generated)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"deadline": "tomorrow"}, "'deadline' is not an ISO 8601 date-time"),
        ({"deadline": "2030-01-01T09:00:00"}, "'deadline' needs a time zone"),
        ({"deadline": "2001-01-01T09:00:00+00:00"}, "'deadline' is in the past"),
        ({"owner": ""}, "'owner' is required"),
        ({"resume_token": "short"}, "'resume_token' must be a string of 16 to 500 characters"),
    ],
)
def test_a_bad_wait_is_refused_and_nothing_changes(tenant, change, message):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    data = {"run_id": "r-1", "owner": "ops", "decision": "approve", "deadline": "2099-01-01T00:00:00+00:00"}
    before = _counts()
    with pytest.raises(AuditInputError, match=message):
        evidence.add_wait(tenant, {**data, **change})
    assert _counts() == before


def test_a_wait_past_its_deadline_is_found_by_the_due_refresh(tenant):
    run = ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    now = timezone.now()
    deadline = now + timedelta(minutes=30)
    evidence.add_wait(
        tenant, {"run_id": "r-1", "owner": "ops", "decision": "d", "deadline": deadline.isoformat()}, now=now
    )
    assert service.refresh_due_verdicts(now=now) == 0
    assert service.refresh_due_verdicts(now=deadline + timedelta(minutes=1)) == 1
    assert _verdict(run) == Verdict.STUCK
    assert RunVerdict.objects.get(run=run).recheck_at is None


def test_registering_a_prompt_contract_re_audits_that_agents_runs(tenant):
    bare = ingest(tenant, history_without_system_prompt("c-1"), run_id="r-1", conversation_id="c-1")
    full = ingest(tenant, mailer_history("c-2"), run_id="r-2", conversation_id="c-2")
    other = ingest(
        tenant, history_without_system_prompt("c-3"), run_id="r-3", conversation_id="c-3", agent="other"
    )
    gap, missing = Verdict.SYSTEM_PROMPT_GAP, Verdict.MISSING_OUTCOME_RECEIPT
    assert [_verdict(r) for r in (bare, full, other)] == [gap, missing, gap]
    contract, count = evidence.set_prompt_contract(tenant, "mailer", {"kind": "dynamic"})
    assert count == 2 and contract.value == ""
    assert _verdict(bare) == Verdict.SYSTEM_PROMPT_GAP  # declared dynamic, yet no instructions were recorded
    evidence.set_prompt_contract(
        tenant, "mailer", {"kind": "hash", "value": prompt_sha256(SYSTEM_PROMPT).upper()}
    )
    assert PromptContract.objects.get(tenant=tenant, agent_name="mailer").value == prompt_sha256(
        SYSTEM_PROMPT
    )
    assert [_verdict(r) for r in (bare, full)] == [Verdict.SYSTEM_PROMPT_GAP, Verdict.MISSING_OUTCOME_RECEIPT]
    assert PromptContract.objects.count() == 1


@pytest.mark.parametrize(
    ("agent", "data", "message"),
    [
        ("mailer", {"kind": "hash", "value": "abc"}, "64-character hex SHA-256"),
        ("mailer", {"kind": "label", "value": "You are a helpful assistant.\nAlways..."}, "single line"),
        ("mailer", {"kind": "label", "value": "x" * 121}, "longer than 120"),
        ("mailer", {"kind": "dynamic", "value": "v1"}, "takes no 'value'"),
        ("mailer", {"kind": "vibes"}, "'kind' must be one of hash, label, dynamic"),
        ("", {"kind": "dynamic"}, "'agent' is required"),
    ],
)
def test_a_bad_prompt_contract_is_refused_and_nothing_changes(tenant, agent, data, message):
    before = _counts()
    with pytest.raises(AuditInputError, match=message):
        evidence.set_prompt_contract(tenant, agent, data)
    assert _counts() == before


def test_a_recorded_merge_clears_scope_drift(tenant):
    run = ingest(tenant, mixed_conversation_history("c-old", "c-new"), run_id="r-1", conversation_id="c-new")
    assert _verdict(run) == Verdict.SCOPE_DRIFT
    evidence.record_merge(tenant, "c-new", "c-old", actor="ops@acme.test")
    assert _verdict(run) == Verdict.MISSING_OUTCOME_RECEIPT


def test_deleting_a_tenant_removes_its_append_only_audit_events(tenant, other_tenant):
    events.record_event(tenant, "key_created", actor="admin@acme.test")
    events.record_event(other_tenant, "key_created", actor="admin@globex.test")
    Tenant.objects.filter(pk=tenant.pk).delete()
    assert list(AuditEvent.objects.values_list("actor", flat=True)) == ["admin@globex.test"]


def test_a_contract_for_an_agent_with_many_runs_marks_the_older_ones_due(tenant, monkeypatch):
    monkeypatch.setattr(evidence, "REAUDIT_INLINE_LIMIT", 1)
    older = ingest(tenant, history_without_system_prompt("c-1"), run_id="r-1", conversation_id="c-1")
    newer = ingest(tenant, history_without_system_prompt("c-2"), run_id="r-2", conversation_id="c-2")
    _, count = evidence.set_prompt_contract(tenant, "mailer", {"kind": "dynamic"})
    assert count == 1
    assert RunVerdict.objects.get(run=older).recheck_at is not None
    assert RunVerdict.objects.get(run=newer).recheck_at is None
    assert service.refresh_due_verdicts() == 1
    assert RunVerdict.objects.get(run=older).recheck_at is None
