"""Operators re-audit a conversation's runs and re-index its transcript from the conversation page."""

from search_app.models import ConversationIndex, SearchDocument
from sessions_app.models import Run
from sessions_app.models.audit import Receipt, RunVerdict


def test_reaudit_brings_a_verdict_up_to_date(world, as_role):
    run = Run.objects.get(run_id="conv-deploy-run-1")
    # A receipt written behind the audit's back (as a restore from backup might): only a re-audit notices.
    Receipt.objects.create(tenant=world.acme, run=run, effect="x", evidence="outcome", checked_by="db")
    assert RunVerdict.objects.get(run=run).verdict == "MISSING OUTCOME RECEIPT"
    response = as_role("operator").post(f"/c/{world.deploy.external_id}/reaudit", follow=True)
    assert b"Re-audited 3 runs" in response.content
    assert RunVerdict.objects.get(run=run).verdict == "READY"


def test_reindex_rebuilds_the_search_documents(world, as_role):
    SearchDocument.objects.filter(conversation_id=world.quiet.pk).delete()
    client = as_role("operator")
    assert "Nothing found:" in client.get("/search/?q=Krak%C3%B3w").content.decode()
    response = client.post(f"/c/{world.quiet.external_id}/reindex", follow=True)
    assert b"Re-indexed" in response.content
    assert ConversationIndex.objects.get(conversation_id=world.quiet.pk).pending is False
    assert "conv-quiet" in client.get("/search/?q=Krak%C3%B3w").content.decode()


def test_support_has_neither_button_nor_access(world, as_role):
    client = as_role("support")
    assert b"Re-audit runs" not in client.get(f"/c/{world.deploy.external_id}/").content
    assert client.post(f"/c/{world.deploy.external_id}/reaudit").status_code == 403
    assert client.post(f"/c/{world.deploy.external_id}/reindex").status_code == 403
