"""Repairs and findings link to their exact place: the snapshot holding an interrupted call, and the call shown
in place in the transcript, marked, where the repair inserts its "interrupted" return."""

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


def test_the_interrupted_deploy_call_shows_in_place_in_the_transcript(live_world, login, page, live_server):
    login("olga")
    page.get_by_role("link", name="Repairs").click()
    page.locator("a.repair-message").first.click()
    page.wait_for_url("**/c/conv-deploy/?at=*#interrupted-*")
    anchor = page.url.split("#", 1)[1]
    mark = page.locator(f"aside#{anchor}")
    expect(mark).to_be_visible()
    expect(mark).to_be_in_viewport()
    assert "Tool call deploy" in mark.inner_text()
    assert 'repair: synthesized "interrupted" return' in mark.inner_text()
    # It sits in the transcript right after the last message before the interruption, marked as a repair.
    previous = mark.locator("xpath=preceding-sibling::article[1]")
    assert previous.get_attribute("id").startswith("m-")
    expect(mark.locator(".badge.bad")).to_have_text("repair")
    # From the mark to the run's audit, whose finding links back to the same place.
    mark.get_by_role("link", name="the run's audit").click()
    page.wait_for_url("**/r/conv-deploy-run-3/audit")
    page.locator("a.finding-message").first.click()
    page.wait_for_url(f"**#{anchor}")
    expect(page.locator(f"aside#{anchor}")).to_be_in_viewport()
    assert page.console_errors == []


def test_support_sees_the_mark_without_operator_links(live_world, login, page, live_server):
    login("sam")
    page.goto(f"{live_server.url}/c/conv-deploy/")
    mark = page.locator("aside.repair-mark")
    expect(mark).to_have_count(1)
    assert mark.get_by_role("link").count() == 1  # its permalink only: snapshots and audits are for operators
