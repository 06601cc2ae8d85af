"""A wait is resolved by presenting its resume token (checked against the stored hash); the run is re-audited.
A wrong token, a client key or bad input changes nothing."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions_app.audit import evidence
from sessions_app.audit.inputs import AuditInputError
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import AuditEvent, RunVerdict, Wait
from sessions_app.tenancy.api_keys import create_api_key
from tests.rowcounts import row_counts
from tests.sessions_app.audit.audit_cases import ingest, mailer_history, outcome_receipt

TOKEN = "resume-token-for-tests-0123456789"


def _waiting_run(tenant, messages=None):
    run = ingest(tenant, messages or mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    deadline = (timezone.now() + timedelta(hours=2)).isoformat()
    evidence.add_wait(
        tenant, {"run_id": "r-1", "owner": "ops", "decision": "approve", "deadline": deadline, "resume_token": TOKEN}
    )
    assert RunVerdict.objects.get(run=run).verdict == Verdict.WAITING
    return run


def _post(client, key, body):
    return client.post(
        "/api/v1/waits/resolve",
        body if isinstance(body, str) else json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )


def test_the_right_token_resolves_the_wait_and_re_audits_the_run(client, tenant):
    run = _waiting_run(tenant)
    evidence.add_receipt(tenant, outcome_receipt("r-1"))
    assert RunVerdict.objects.get(run=run).verdict == Verdict.WAITING  # the decision is still pending
    _, key = create_api_key(tenant, "server")
    response = _post(client, key, {"run_id": "r-1", "resume_token": TOKEN})
    assert response.status_code == 200
    assert response.json()["verdict"] == Verdict.READY == RunVerdict.objects.get(run=run).verdict
    wait = Wait.objects.get()
    assert wait.resolved_at is not None and wait.resolved_by.startswith("api-key:sdk_s_")
    event = AuditEvent.objects.get(event_class="wait_resolved")
    assert (event.run_id, event.conversation_id) == ("r-1", "c-1")
    assert TOKEN not in json.dumps(list(AuditEvent.objects.values()), default=str)


def test_a_wait_before_any_response_holds_the_run_until_resolved(tenant):
    run = _waiting_run(tenant, mailer_history("c-1")[:1])
    _, report = evidence.resolve_wait(tenant, {"run_id": "r-1", "resume_token": TOKEN})
    assert report.verdict == Verdict.READY == RunVerdict.objects.get(run=run).verdict


def test_a_wrong_token_is_403_and_changes_nothing(client, tenant):
    _waiting_run(tenant)
    _, key = create_api_key(tenant, "server")
    before = row_counts()
    response = _post(client, key, {"run_id": "r-1", "resume_token": "not-the-token-0123456789"})
    assert response.status_code == 403 and "'resume_token' does not match" in response.json()["error"]
    assert row_counts() == before and Wait.objects.get().resolved_at is None


def test_a_resolved_wait_cannot_be_resolved_twice(tenant):
    _waiting_run(tenant)
    evidence.resolve_wait(tenant, {"run_id": "r-1", "resume_token": TOKEN})
    with pytest.raises(AuditInputError) as again:
        evidence.resolve_wait(tenant, {"run_id": "r-1", "resume_token": TOKEN})
    assert again.value.status == 403


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"run_id": "r-1"}, "'resume_token' is required"),
        ({"run_id": "r-1", "resume_token": "short"}, "'resume_token' must be a string of 16 to 500"),
        ({"resume_token": TOKEN}, "'run_id' is required"),
        ("{nope", "Invalid JSON"),
    ],
)
def test_bad_input_is_400_naming_the_field(client, tenant, body, message):
    _waiting_run(tenant)
    _, key = create_api_key(tenant, "server")
    before = row_counts()
    response = _post(client, key, body)
    assert response.status_code == 400 and message in response.json()["error"]
    assert row_counts() == before


def test_a_client_key_cannot_resolve_and_another_tenants_run_is_404(client, tenant, other_tenant):
    _waiting_run(tenant)
    _, client_key = create_api_key(tenant, "client")
    _, their_key = create_api_key(other_tenant, "server")
    before = row_counts()
    assert _post(client, client_key, {"run_id": "r-1", "resume_token": TOKEN}).status_code == 403
    theirs = _post(client, their_key, {"run_id": "r-1", "resume_token": TOKEN})
    missing = _post(client, their_key, {"run_id": "r-nowhere", "resume_token": TOKEN})
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["error"].replace("r-1", "X") == missing.json()["error"].replace("r-nowhere", "X")
    assert row_counts() == before
