"""SPEC section 3's seven reference cases, stored through ingestion and audited: exactly seven verdicts."""

from datetime import timedelta

from django.utils import timezone

from sessions_app.audit import evidence, service
from sessions_app.audit.digests import prompt_sha256
from sessions_app.audit.vocabulary import Verdict
from sessions_app.models import RunVerdict
from tests.sessions_app.audit.audit_cases import (
    SYSTEM_PROMPT,
    history_with_orphan_result,
    history_without_system_prompt,
    ingest,
    interrupted_history,
    mailer_history,
    mixed_conversation_history,
    outcome_receipt,
)


def _register_contract(tenant):
    evidence.set_prompt_contract(tenant, "mailer", {"kind": "hash", "value": prompt_sha256(SYSTEM_PROMPT)})


def test_the_seven_reference_cases_give_the_seven_verdicts(tenant):
    _register_contract(tenant)
    cases = {
        "ready": (mailer_history("c-ready"), {}, True),
        "no-prompt": (history_without_system_prompt("c-no-prompt"), {}, True),
        "interrupted": (interrupted_history("c-interrupted"), {"state": "interrupted"}, True),
        "orphan": (history_with_orphan_result("c-orphan"), {}, True),
        "mixed": (mixed_conversation_history("c-mixed-a", "c-mixed"), {}, True),
        "no-receipt": (mailer_history("c-no-receipt"), {}, False),
        "client": (mailer_history("c-client"), {"source": "client"}, True),
    }
    for name, (messages, options, with_receipt) in cases.items():
        ingest(tenant, messages, run_id=f"r-{name}", conversation_id=f"c-{name}", **options)
        if with_receipt:
            evidence.add_receipt(tenant, outcome_receipt(f"r-{name}"))

    verdicts = dict(RunVerdict.objects.filter(tenant=tenant).values_list("run__run_id", "verdict"))
    assert verdicts == {
        "r-ready": Verdict.READY,
        "r-no-prompt": Verdict.SYSTEM_PROMPT_GAP,
        "r-interrupted": Verdict.INTERRUPTED_TOOL,
        "r-orphan": Verdict.ORPHAN_RESULT_REMOVED,
        "r-mixed": Verdict.SCOPE_DRIFT,
        "r-no-receipt": Verdict.MISSING_OUTCOME_RECEIPT,
        "r-client": Verdict.UNTRUSTED_HISTORY,
    }
    # Each case fails exactly its own gate: no other finding hides behind the verdict.
    for stored in RunVerdict.objects.filter(tenant=tenant):
        assert {f["code"] for f in stored.findings} <= {stored.verdict}


def test_combined_failures_keep_every_finding_and_show_the_gravest(tenant):
    _register_contract(tenant)
    # Client-supplied and interrupted, with no receipt: three gates fail.
    run = ingest(
        tenant,
        interrupted_history("c-combo"),
        run_id="r-combo",
        conversation_id="c-combo",
        state="interrupted",
        source="client",
    )
    report = service.audit_report(run)
    assert report.verdict == Verdict.UNTRUSTED_HISTORY
    assert [f["code"] for f in report.findings] == [
        Verdict.UNTRUSTED_HISTORY,
        Verdict.INTERRUPTED_TOOL,
        Verdict.MISSING_OUTCOME_RECEIPT,
    ]

    # Mixed ids and a dropped system prompt: scope drift wins over the prompt gap.
    messages = history_without_system_prompt("c-drift")
    messages[0] = type(messages[0])(parts=messages[0].parts, conversation_id="c-elsewhere")
    drift = ingest(tenant, messages, run_id="r-drift", conversation_id="c-drift")
    codes = [f["code"] for f in service.audit_report(drift).findings]
    assert codes[0] == Verdict.SCOPE_DRIFT and Verdict.SYSTEM_PROMPT_GAP in codes
    assert service.audit_report(drift).verdict == Verdict.SCOPE_DRIFT


def test_a_wait_makes_a_run_waiting_then_stuck_after_its_deadline(tenant):
    _register_contract(tenant)
    run = ingest(tenant, mailer_history("c-wait"), run_id="r-wait", conversation_id="c-wait")
    now = timezone.now()
    deadline = now + timedelta(hours=2)
    evidence.add_wait(
        tenant,
        {
            "run_id": "r-wait",
            "owner": "ops@acme.test",
            "decision": "approve",
            "deadline": deadline.isoformat(),
        },
        now=now,
    )
    assert service.audit_report(run, now=now).verdict == Verdict.WAITING
    assert service.audit_report(run, now=deadline + timedelta(seconds=1)).verdict == Verdict.STUCK
    assert RunVerdict.objects.get(run=run).verdict == Verdict.STUCK
