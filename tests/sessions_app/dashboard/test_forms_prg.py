"""Receipts have no default evidence and say the resulting verdict; a new API key survives no reload."""

import pytest

from sessions_app.models import Run

pytestmark = pytest.mark.django_db


def test_the_receipt_form_has_no_default_evidence(world, as_role):
    run = Run.objects.filter(conversation=world.deploy).first()
    page = as_role("operator").get(f"/r/{run.run_id}/receipts/").content.decode()
    assert '<option value="" selected>— choose the evidence —</option>' in page
    response = as_role("operator").post(f"/r/{run.run_id}/receipts/add", {"effect": "x", "checked_by": "me"})
    assert response.status_code == 400  # nothing picked: nothing recorded


def test_a_receipt_says_the_resulting_verdict(world, as_role):
    run = Run.objects.filter(conversation=world.deploy).first()
    client = as_role("operator")
    data = {"effect": "x", "evidence": "activity", "checked_by": "me"}
    response = client.post(f"/r/{run.run_id}/receipts/add", data, follow=True)
    assert "the run was re-audited: its verdict is now " in response.content.decode()
