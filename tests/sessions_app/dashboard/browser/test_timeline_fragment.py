"""The runs timeline, folded under the transcript-first page, loads when its panel opens; without JavaScript, a link
in the panel shows it in place."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_the_timeline_arrives_after_the_page_and_its_links_work(live_world, login, page, live_server):
    login("olga")
    page.goto(f"{live_server.url}/c/conv-deploy/?at=2#m-2")
    expect(page.locator("#m-2")).to_be_in_viewport()  # the message asked for is in view; nothing lands above it
    page.locator("#runs > summary").click()
    table = page.get_by_role("table", name="Runs, steps and tool calls over time")
    expect(table.locator("tr.run")).to_have_count(3)
    assert page.url.endswith("/c/conv-deploy/?at=2#m-2")  # loading it pushed no history entry
    table.locator("tr.step a[href^='#m-']").first.click()
    assert page.url.split("#")[1].startswith("m-")
    page.go_back()
    expect(page.get_by_role("table", name="Runs, steps and tool calls over time")).to_be_visible()
    assert page.console_errors == []


def test_without_javascript_a_link_shows_the_page_with_its_timeline(live_world, page_without_javascript, live_server):
    page = page_without_javascript
    page.goto(f"{live_server.url}/c/conv-deploy/")
    assert page.get_by_role("table", name="Runs, steps and tool calls over time").count() == 0
    page.locator("#runs > summary").click()
    page.get_by_role("link", name="Show the runs timeline").click()
    assert page.url.endswith("/c/conv-deploy/?timeline=inline#timeline")
    expect(page.get_by_role("table", name="Runs, steps and tool calls over time").locator("tr.run")).to_have_count(3)
    assert "input" in page.locator("#timeline-totals").inner_text()
