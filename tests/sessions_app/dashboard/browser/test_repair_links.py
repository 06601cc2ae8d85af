"""A repair links to the snapshot it concerns (and to its message when the recovered transcript holds it)."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_a_repair_opens_the_snapshot_holding_the_interrupted_call(live_world, login, page, live_server):
    login("olga")
    page.get_by_role("link", name="Repairs").click()
    link = page.locator("a.repair-snapshot").first
    expect(link).to_have_text("snapshot #1")
    link.click()
    page.wait_for_url("**/r/conv-deploy-run-3/snapshots/1/diff")
    assert "deploy" in page.locator("main").inner_text()
    assert page.console_errors == []
