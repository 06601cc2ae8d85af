"""A receipt in Chromium: no evidence level is picked for the person, the message states the resulting verdict,
and reloading after the redirect records nothing twice (post/redirect/get)."""

import pytest
from playwright.sync_api import expect

from sessions_app.models.audit import Receipt

pytestmark = pytest.mark.browser


def test_a_receipt_needs_a_chosen_evidence_level_and_says_what_verdict_follows(live_world, login, page, live_server):
    login("olga")
    page.goto(f"{live_server.url}/r/conv-deploy-run-1/receipts/")
    evidence = page.locator("#id_evidence")
    assert evidence.input_value() == ""  # nothing chosen for the person
    page.get_by_role("textbox", name="Effect").fill("flag-rolled-out")
    page.get_by_label("Checked by").first.fill("olga")
    page.get_by_role("button", name="Add receipt").click()
    # The browser refuses the form until an evidence level is picked; nothing was recorded.
    assert evidence.evaluate("e => e.validity.valueMissing") is True
    assert Receipt.objects.count() == 0
    evidence.select_option("outcome")
    page.get_by_role("button", name="Add receipt").click()
    page.wait_for_url(f"{live_server.url}/r/conv-deploy-run-1/receipts/")
    expect(page.get_by_text("Receipt recorded; the run was re-audited: its verdict is now")).to_be_visible()
    page.reload()
    assert Receipt.objects.count() == 1  # the reload asked for the page, not the form again
    assert page.console_errors == []
