"""STUCK (issue 26): a run still "running" with no snapshot for the tenant's `stuck_after_hours` (24 by default)
is STUCK in its stored verdict, so in the list, the overview and the replay gate, once the time has passed and
without a new snapshot; a run that is still sending, or that ended, is not."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions_app.audit import service
from sessions_app.audit.vocabulary import Verdict
from sessions_app.dashboard.overview import tenant_overview
from sessions_app.models import Conversation, Run, RunState, RunVerdict
from sessions_app.tenancy.api_keys import create_api_key
from tests.factories import make_member
from tests.sessions_app.audit.audit_cases import ingest, mailer_history

pytestmark = pytest.mark.django_db


def _running(tenant):
    messages = mailer_history("c-1")[:-1]  # ends before the final answer: the run is still running
    run = ingest(tenant, messages, run_id="r-1", conversation_id="c-1")
    assert run.state == RunState.RUNNING
    return run


def _quiet_for(run, hours: float) -> None:
    Run.objects.filter(pk=run.pk).update(last_snapshot_at=timezone.now() - timedelta(hours=hours))
    # The recheck the audit stored is when the quiet run turns STUCK; move it with the snapshot time.
    RunVerdict.objects.filter(run=run).update(recheck_at=timezone.now() - timedelta(seconds=1))


def _verdict(run) -> str:
    return RunVerdict.objects.get(run=run).verdict


def test_a_running_run_quiet_past_the_limit_is_stuck_and_says_since_when(tenant):
    run = _running(tenant)
    assert _verdict(run) != Verdict.STUCK
    assert RunVerdict.objects.get(run=run).recheck_at is not None  # when it would turn STUCK
    _quiet_for(run, 25)
    assert service.refresh_tenant_verdicts(tenant) == 1
    stored = RunVerdict.objects.get(run=run)
    assert stored.verdict == Verdict.STUCK
    assert any("sent no snapshot since" in f["detail"] for f in stored.findings)
    assert Conversation.objects.get(pk=run.conversation_id).worst_verdict == Verdict.STUCK


def test_the_tenant_sets_the_limit(tenant):
    tenant.stuck_after_hours = 48
    tenant.save()
    run = _running(tenant)
    _quiet_for(run, 25)
    service.refresh_tenant_verdicts(tenant)
    assert _verdict(run) != Verdict.STUCK


def test_a_new_snapshot_or_an_ended_run_is_not_stuck(tenant):
    run = _running(tenant)
    _quiet_for(run, 25)
    ingest(tenant, mailer_history("c-1"), run_id="r-1", conversation_id="c-1")  # it answered after all
    assert _verdict(run) != Verdict.STUCK


def test_the_list_the_overview_and_the_replay_gate_say_stuck(tenant, client):
    run = _running(tenant)
    _quiet_for(run, 25)
    client.force_login(make_member(tenant, "support", "sue"))
    page = client.get("/conversations/?verdict=STUCK").content.decode()
    assert 'data-verdict="STUCK"' in page and ">c-1</a>" in page
    day = run.started_at.date()
    assert tenant_overview(tenant, day, day).days[0].runs_by_verdict == {Verdict.STUCK.value: 1}
    _, key = create_api_key(tenant, "server")
    answer = client.get("/api/v1/conversations/c-1/replay", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert answer.status_code == 409
    assert answer.json()["verdict"] == Verdict.STUCK
