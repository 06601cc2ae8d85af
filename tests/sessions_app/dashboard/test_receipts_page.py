"""Operators list and add outcome receipts and waits for a run; the verdict follows."""

from sessions_app.models import Run
from sessions_app.models.audit import Receipt, RunVerdict, Wait


def _run(world, n: int = 1) -> Run:
    return Run.objects.get(tenant=world.acme, run_id=f"conv-deploy-run-{n}")


def test_an_outcome_receipt_makes_a_missing_receipt_run_ready(world, as_role):
    run = _run(world)
    assert RunVerdict.objects.get(run=run).verdict == "MISSING OUTCOME RECEIPT"
    response = as_role("operator").post(
        f"/r/{run.run_id}/receipts/add",
        {"effect": "flag-read", "evidence": "outcome", "checked_by": "olga", "reference": "flags/42@v7"},
    )
    assert response.status_code == 302
    assert RunVerdict.objects.get(run=run).verdict != "MISSING OUTCOME RECEIPT"
    page = as_role("operator").get(f"/r/{run.run_id}/receipts/").content.decode()
    assert "flag-read" in page and "flags/42@v7" in page


def test_a_bad_receipt_is_refused_and_stores_nothing(world, as_role):
    run = _run(world)
    before = Receipt.objects.count()
    response = as_role("operator").post(
        f"/r/{run.run_id}/receipts/add", {"effect": "x\ny", "evidence": "outcome", "checked_by": "o"}
    )
    assert response.status_code == 400
    assert Receipt.objects.count() == before


def test_a_wait_without_a_token_shows_the_generated_one_once(world, as_role):
    run = _run(world)
    response = as_role("operator").post(
        f"/r/{run.run_id}/waits/add", {"owner": "finance", "decision": "approve refund", "deadline": "2999-01-01T09:00"}
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert "Resume token for this wait" in response.content.decode()
    assert Wait.objects.filter(run=run, owner="finance").count() == 1
    assert RunVerdict.objects.get(run=run).verdict == "WAITING"
    again = as_role("operator").get(f"/r/{run.run_id}/receipts/").content.decode()
    assert "Resume token for this wait" not in again


def test_a_wait_in_the_past_is_refused(world, as_role):
    run = _run(world)
    response = as_role("operator").post(
        f"/r/{run.run_id}/waits/add", {"owner": "o", "decision": "d", "deadline": "2001-01-01T09:00"}
    )
    assert response.status_code == 400
    assert b"in the past" in response.content
    assert not Wait.objects.exists()


def test_support_cannot_add_a_receipt(world, as_role):
    run = _run(world)
    response = as_role("support").post(
        f"/r/{run.run_id}/receipts/add", {"effect": "x", "evidence": "outcome", "checked_by": "o"}
    )
    assert response.status_code == 403
    assert not Receipt.objects.exists()
