"""The audit CLI: add_receipt, add_wait, set_prompt_contract and audit, twins of the API."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from sessions_app.audit.digests import hash_resume_token, prompt_sha256
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import PromptContract, Receipt, RunVerdict, Wait
from tests.sessions_app.audit.audit_cases import (
    SYSTEM_PROMPT,
    history_without_system_prompt,
    ingest,
    interrupted_history,
    mailer_history,
)


def _run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_audit_prints_the_verdict_and_findings_as_json(tenant):
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    out, _ = _run("audit", "--tenant", "acme", "--run", "r-1", "--format", "json")
    report = json.loads(out)
    assert report["verdict"] == Verdict.INTERRUPTED_TOOL
    assert [f["class"] for f in report["findings"]] == ["interrupted_synthesized", "missing_receipt"]
    assert {"gate", "class", "detail", "guidance", "code"} <= set(report["findings"][0])


def test_audit_as_text_says_what_to_do_next(tenant):
    ingest(tenant, interrupted_history("c-1"), run_id="r-1", conversation_id="c-1", state="interrupted")
    out, _ = _run("audit", "--tenant", "acme", "--run", "r-1", "--format", "text")
    assert out.startswith("run r-1 (conversation c-1): INTERRUPTED TOOL")
    assert "Next: An interrupted call is a signal, not a retry order." in out


def test_audit_all_covers_every_run_of_the_tenant_only(tenant, other_tenant):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    ingest(tenant, mailer_history("c-2"), run_id="r-2", conversation_id="c-2")
    ingest(other_tenant, mailer_history("c-3"), run_id="r-3", conversation_id="c-3")
    out, _ = _run("audit", "--tenant", "acme", "--all", "--format", "json")
    assert [r["run_id"] for r in json.loads(out)] == ["r-1", "r-2"]


def test_unknown_tenant_and_run_are_clear_errors(tenant):
    with pytest.raises(CommandError, match="No tenant 'nope'"):
        _run("audit", "--tenant", "nope", "--run", "r-1")
    with pytest.raises(CommandError, match="No run 'r-9' in this tenant"):
        _run("audit", "--tenant", "acme", "--run", "r-9")


def test_add_receipt_records_it_and_prints_the_new_verdict(tenant):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    out, _ = _run(
        "add_receipt",
        "--tenant",
        "acme",
        "--run",
        "r-1",
        "--effect",
        "invoice-email-sent",
        "--evidence",
        "outcome",
        "--checked-by",
        "mailbox-reader",
        "--reference",
        "imap:uid=88",
    )
    assert out.strip().endswith("run r-1: READY")
    assert Receipt.objects.get().reference == "imap:uid=88"


def test_add_receipt_with_a_blank_effect_fails_and_stores_nothing(tenant):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    with pytest.raises(CommandError, match="'effect' is required"):
        _run(
            "add_receipt",
            "--tenant",
            "acme",
            "--run",
            "r-1",
            "--effect",
            " ",
            "--evidence",
            "outcome",
            "--checked-by",
            "me",
        )
    assert Receipt.objects.count() == 0


def test_add_wait_prints_a_generated_resume_token_once_and_stores_its_hash(tenant):
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    deadline = (timezone.now() + timedelta(hours=1)).isoformat()
    out, err = _run(
        "add_wait",
        "--tenant",
        "acme",
        "--run",
        "r-1",
        "--owner",
        "ops",
        "--decision",
        "approve",
        "--deadline",
        deadline,
    )
    token = out.strip()
    assert Wait.objects.get().resume_token_hash == hash_resume_token(token)
    assert "run r-1: WAITING" in err


def test_set_prompt_contract_hashes_a_prompt_file_locally_and_never_stores_its_text(tenant, tmp_path):
    ingest(tenant, history_without_system_prompt("c-1"), run_id="r-1", conversation_id="c-1")
    ingest(tenant, mailer_history("c-2"), run_id="r-2", conversation_id="c-2")
    prompt_file = tmp_path / "mailer.txt"
    prompt_file.write_text(SYSTEM_PROMPT + "\n", encoding="utf-8")
    out, _ = _run(
        "set_prompt_contract", "--tenant", "acme", "--agent", "mailer", "--prompt-file", str(prompt_file)
    )
    assert "re-audited 2 run(s)" in out
    contract = PromptContract.objects.get()
    assert (contract.kind, contract.value) == ("hash", prompt_sha256(SYSTEM_PROMPT))
    assert SYSTEM_PROMPT not in repr(list(PromptContract.objects.values()))
    verdicts = dict(RunVerdict.objects.values_list("run__run_id", "verdict"))
    assert verdicts == {"r-1": Verdict.SYSTEM_PROMPT_GAP, "r-2": Verdict.MISSING_OUTCOME_RECEIPT}


def test_set_prompt_contract_takes_a_label_or_a_dynamic_declaration(tenant, tmp_path):
    _run("set_prompt_contract", "--tenant", "acme", "--agent", "mailer", "--label", "billing-mailer-v3")
    assert PromptContract.objects.get().kind == "label"
    _run("set_prompt_contract", "--tenant", "acme", "--agent", "mailer", "--dynamic")
    assert (PromptContract.objects.get().kind, PromptContract.objects.get().value) == ("dynamic", "")
    with pytest.raises(CommandError, match="Cannot read the prompt file"):
        _run(
            "set_prompt_contract",
            "--tenant",
            "acme",
            "--agent",
            "mailer",
            "--prompt-file",
            str(tmp_path / "no"),
        )
    assert PromptContract.objects.get().kind == "dynamic"


def test_audit_refresh_due_turns_an_expired_wait_into_stuck(tenant):
    run = ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")
    deadline = timezone.now() + timedelta(hours=1)
    _run(
        "add_wait", "--tenant", "acme", "--run", "r-1", "--owner", "ops", "--decision", "approve",
        "--deadline", deadline.isoformat(),
    )
    assert RunVerdict.objects.get(run=run).verdict == Verdict.WAITING
    # Let the hour pass: move the deadline and the recheck time it set into the past.
    past = timezone.now() - timedelta(seconds=1)
    Wait.objects.filter(run=run).update(deadline=past)
    RunVerdict.objects.filter(run=run).update(recheck_at=past)
    out, _ = _run("audit", "--refresh-due")
    assert out.strip() == "Re-audited 1 run(s) whose verdict was due."
    assert RunVerdict.objects.get(run=run).verdict == Verdict.STUCK
