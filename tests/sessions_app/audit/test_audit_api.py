"""The audit API: receipts, waits and prompt contracts in with a server key; a run's audit out."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions_app.audit.digests import prompt_sha256
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import AuditEvent, PromptContract, Receipt, RunVerdict, Wait
from sessions_app.tenancy.api_keys import create_api_key, revoke_api_key
from tests.sessions_app.audit.audit_cases import (
    ARGUMENT_MARKERS,
    RESULT_MARKERS,
    SYSTEM_PROMPT,
    ingest,
    interrupted_history,
    mailer_history,
    outcome_receipt,
)


@pytest.fixture
def server_key(tenant):
    return create_api_key(tenant, "server")[1]


@pytest.fixture
def client_key(tenant):
    return create_api_key(tenant, "client")[1]


def _post(client, url, key, body):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.post(url, data, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")


def _counts():
    return tuple(m.objects.count() for m in (Receipt, Wait, PromptContract, AuditEvent, RunVerdict))


def test_a_receipt_posted_with_a_server_key_updates_the_verdict(client, tenant, server_key):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    response = _post(client, "/api/v1/receipts", server_key, outcome_receipt("r-1"))
    assert response.status_code == 201
    assert response.json()["verdict"] == Verdict.READY
    assert Receipt.objects.get().reference == "sha256:5f1c0e"


def test_writes_need_a_server_key_and_a_client_key_changes_nothing(client, tenant, client_key):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    before = _counts()
    for url, body in [
        ("/api/v1/receipts", outcome_receipt("r-1")),
        (
            "/api/v1/waits",
            {"run_id": "r-1", "owner": "o", "decision": "d", "deadline": "2099-01-01T00:00:00Z"},
        ),
        ("/api/v1/agents/mailer/prompt-contract", {"kind": "dynamic"}),
    ]:
        response = _post(client, url, client_key, body)
        assert response.status_code == 403
        assert "server API key" in response.json()["error"]
    assert _counts() == before


def test_a_missing_or_revoked_key_is_401(client, tenant):
    key, raw = create_api_key(tenant, "server")
    revoke_api_key(key)
    assert client.get("/api/v1/runs/r-1/audit").status_code == 401
    assert client.get("/api/v1/runs/r-1/audit", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_bad_json_and_bad_fields_answer_400_naming_the_problem(client, tenant, server_key):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    before = _counts()
    response = _post(client, "/api/v1/receipts", server_key, "{nope")
    assert response.status_code == 400 and response.json()["error"].startswith("Invalid JSON")
    response = _post(client, "/api/v1/receipts", server_key, {**outcome_receipt("r-1"), "evidence": "vibes"})
    assert response.status_code == 400 and "'evidence' must be one of" in response.json()["error"]
    response = _post(client, "/api/v1/receipts", server_key, [1, 2])
    assert response.status_code == 400 and "must be a JSON object" in response.json()["error"]
    assert _counts() == before


def test_a_wait_returns_a_generated_resume_token_once(client, tenant, server_key):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    deadline = (timezone.now() + timedelta(hours=3)).isoformat()
    body = {"run_id": "r-1", "owner": "ops@acme.test", "decision": "approve the refund", "deadline": deadline}
    response = _post(client, "/api/v1/waits", server_key, body)
    assert response.status_code == 201
    token = response.json()["resume_token"]
    assert response.json()["verdict"] == Verdict.WAITING
    assert token not in repr(list(Wait.objects.values()))
    with_token = _post(
        client, "/api/v1/waits", server_key, {**body, "resume_token": "my-own-token-0123456789"}
    )
    assert "resume_token" not in with_token.json()


def test_a_prompt_contract_posted_for_an_agent_re_audits_its_runs(client, tenant, server_key):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    response = _post(
        client,
        "/api/v1/agents/mailer/prompt-contract",
        server_key,
        {"kind": "hash", "value": prompt_sha256("a prompt this agent never had")},
    )
    assert response.status_code == 200
    assert response.json()["runs_reaudited"] == 1
    assert RunVerdict.objects.get().verdict == Verdict.SYSTEM_PROMPT_GAP
    fixed = {"kind": "hash", "value": prompt_sha256(SYSTEM_PROMPT)}
    _post(client, "/api/v1/agents/mailer/prompt-contract", server_key, fixed)
    assert RunVerdict.objects.get().verdict == Verdict.MISSING_OUTCOME_RECEIPT


def test_the_run_audit_lists_every_finding_with_guidance_and_no_content(client, tenant, server_key):
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    response = client.get("/api/v1/runs/r-1/audit", HTTP_AUTHORIZATION=f"Bearer {server_key}")
    assert response.status_code == 200
    body = response.json()
    assert body["verdict"] == Verdict.INTERRUPTED_TOOL
    assert [(f["gate"], f["class"]) for f in body["findings"]] == [
        ("tool_pairing", "interrupted_synthesized"),
        ("outcome_receipt", "missing_receipt"),
    ]
    assert all(f["detail"] and f["guidance"] for f in body["findings"])
    text = response.content.decode()
    assert not any(marker in text for marker in ARGUMENT_MARKERS + RESULT_MARKERS)


def test_another_tenants_run_is_404_like_a_missing_one(client, tenant, other_tenant, server_key):
    ingest(other_tenant, mailer_history("c-1"), run_id="r-theirs", conversation_id="c-1")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {server_key}"}
    theirs = client.get("/api/v1/runs/r-theirs/audit", **auth)
    missing = client.get("/api/v1/runs/r-nowhere/audit", **auth)
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json()["error"].replace("r-theirs", "X") == missing.json()["error"].replace(
        "r-nowhere", "X"
    )
    before = _counts()
    assert _post(client, "/api/v1/receipts", server_key, outcome_receipt("r-theirs")).status_code == 404
    assert _counts() == before
