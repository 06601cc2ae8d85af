"""Operators record an explicit conversation merge from a run's receipts page: SCOPE DRIFT clears, the merge is
logged once, and a refused merge changes nothing."""

from sessions_app.models import Run
from sessions_app.models.audit import AuditEvent, ConversationMerge, RunVerdict
from tests.rowcounts import row_counts
from tests.sessions_app.audit.audit_cases import ingest, mixed_conversation_history


def _drifting_run(world) -> Run:
    """A run of conversation 'c-new' whose history also carries conversation 'c-old' (both acme's)."""
    ingest(world.acme, mixed_conversation_history("c-old", "c-old"), run_id="r-old", conversation_id="c-old")
    return ingest(world.acme, mixed_conversation_history("c-old", "c-new"), run_id="r-new", conversation_id="c-new")


def test_a_recorded_merge_clears_scope_drift_and_is_logged(world, as_role):
    run = _drifting_run(world)
    assert RunVerdict.objects.get(run=run).verdict == "SCOPE DRIFT"
    response = as_role("operator").post(f"/r/{run.run_id}/merges/add", {"merged_conversation_id": "c-old"})
    assert response.status_code == 302
    assert RunVerdict.objects.get(run=run).verdict == "MISSING OUTCOME RECEIPT"
    merge = ConversationMerge.objects.get(tenant=world.acme)
    assert (merge.conversation.external_id, merge.merged_external_id, merge.actor) == ("c-new", "c-old", "olga")
    event = AuditEvent.objects.get(tenant=world.acme, event_class="conversations_merged")
    assert (event.conversation_id, event.actor) == ("c-new", "olga")
    page = as_role("operator").get(f"/r/{run.run_id}/receipts/").content.decode()
    assert "Merged conversations" in page and '<span class="mono">c-old</span>' in page


def test_support_cannot_record_a_merge(world, as_role):
    run = _drifting_run(world)
    before = row_counts()
    response = as_role("support").post(f"/r/{run.run_id}/merges/add", {"merged_conversation_id": "c-old"})
    assert response.status_code == 403
    assert row_counts() == before
    assert RunVerdict.objects.get(run=run).verdict == "SCOPE DRIFT"


def test_a_merge_into_another_tenants_run_is_not_found(world, as_role):
    foreign = Run.objects.filter(tenant=world.globex).first()
    assert foreign is not None
    before = row_counts()
    response = as_role("operator").post(f"/r/{foreign.run_id}/merges/add", {"merged_conversation_id": "c-old"})
    assert response.status_code == 404
    assert row_counts() == before


def test_a_bad_merge_is_a_form_error_and_changes_nothing(world, as_role):
    run = _drifting_run(world)
    before = row_counts()
    for merged in ("", "c-new", "x" * 201):  # missing, the conversation itself, too long
        response = as_role("operator").post(f"/r/{run.run_id}/merges/add", {"merged_conversation_id": merged})
        assert response.status_code == 400
        assert b'class="errorlist' in response.content
    assert row_counts() == before
    assert RunVerdict.objects.get(run=run).verdict == "SCOPE DRIFT"
