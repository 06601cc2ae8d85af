"""A call the tool-effect ledger saw start and never end after its run stopped is an INTERRUPTED TOOL finding
(outcome unknown after crash) unless the history answers it or already reports it; the service passes the
unfinished entries of stopped runs only."""

import pytest

from sessions_app.audit import gates, service
from sessions_app.audit.digests import hash_tool_call_id
from sessions_app.audit.ledger import OUTCOME_UNKNOWN
from sessions_app.audit.vocabulary import Verdict
from sessions_app.ingest.payloads import parse_tool_effect
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.models import Run, RunState
from tests.sessions_app.audit.audit_cases import (
    CARD_CALL_ID,
    MAIL_CALL_ID,
    context_for,
    interrupted_history,
    mailer_history,
)
from tests.sessions_app.dashboard.conftest import ingest_plan, quiet_plan


def test_an_unfinished_call_outside_the_history_is_of_unknown_outcome():
    messages = mailer_history()
    ctx = context_for(messages, unfinished_effects={"call-refund-9": "refund"})
    (finding,) = gates.check_tool_pairing(messages, ctx)
    assert finding.code == Verdict.INTERRUPTED_TOOL and finding.gate == gates.TOOL_PAIRING
    assert finding.tool_name == "refund" and finding.tool_call_hash == hash_tool_call_id("call-refund-9")
    assert OUTCOME_UNKNOWN in finding.detail and "Query the destination" in finding.guidance
    assert "call-refund-9" not in finding.detail


def test_a_call_the_history_answers_is_not_flagged_again():
    messages = mailer_history()
    assert gates.check_tool_pairing(messages, context_for(messages, unfinished_effects={MAIL_CALL_ID: "send"})) == []


def test_a_call_already_reported_as_interrupted_is_one_finding():
    messages = interrupted_history()
    ctx = context_for(
        messages, unfinished_effects={CARD_CALL_ID: "charge_card"}, tool_effects={CARD_CALL_ID: "started"}
    )
    (finding,) = gates.check_tool_pairing(messages, ctx)
    assert "started and never finished" in finding.detail


@pytest.mark.django_db
def test_a_running_run_s_started_call_may_still_end(tenant):
    ingest_plan(tenant, quiet_plan(), "conv-q")
    run = Run.objects.get(tenant=tenant, conversation__external_id="conv-q")
    effect = parse_tool_effect(
        {"run_id": run.run_id, "tool_call_id": "c-9", "tool_name": "refund", "status": "started"}
    )
    ingest_snapshots(tenant, [], source="server", via="api", tool_effects=[effect])
    assert service.audit_report(run).verdict == Verdict.INTERRUPTED_TOOL
    Run.objects.filter(pk=run.pk).update(state=RunState.RUNNING)
    run.refresh_from_db()
    assert not [f for f in service.audit_run(run).findings if OUTCOME_UNKNOWN in f["detail"]]
