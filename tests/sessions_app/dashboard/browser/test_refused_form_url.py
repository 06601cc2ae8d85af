"""B14: a refused form is shown again with its page's own URL in the address bar, not the action's."""

import pytest
from playwright.sync_api import expect

from sessions_app.audit import evidence
from sessions_app.models import Run

pytestmark = pytest.mark.browser


def test_a_wrong_resume_token_leaves_the_browser_on_the_audit_page(live_world, login, page, live_server):
    run = Run.objects.get(tenant=live_world.acme, run_id="conv-deploy-run-1")
    evidence.add_wait(
        live_world.acme,
        {
            "run_id": run.run_id,
            "owner": "finance",
            "decision": "approve",
            "deadline": "2999-01-01T09:00:00+00:00",
            "resume_token": "operator-resume-token-0123456789",
        },
    )
    login("olga")
    page.goto(f"{live_server.url}/r/{run.run_id}/audit")
    page.get_by_label("Resume token").fill("wrong-token-0123456789")
    page.get_by_role("button", name="Resolve wait").click()
    expect(page.get_by_text("does not match an open wait")).to_be_visible()
    assert page.url == f"{live_server.url}/r/{run.run_id}/audit"
    page.reload()  # the page, not the form sent again
    expect(page.get_by_role("button", name="Resolve wait")).to_be_visible()
    # The refused POST itself is a 400 (Chromium logs it); nothing else may fail.
    assert [e for e in page.console_errors if "status of 400" not in e] == []
