"""A conversation page offers "search in this conversation"; `/` there focuses it; the results stay in it."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_slash_searches_in_this_conversation(live_world, login, page, live_server):
    login("sam")
    page.goto(f"{live_server.url}/c/{live_world.quiet.external_id}/")
    page.keyboard.press("/")
    box = page.get_by_role("searchbox", name="Search in this conversation")
    expect(box).to_be_focused()
    box.fill("the")
    box.press("Enter")
    page.wait_for_url(re.compile(r".*/search/\?conversation=conv-quiet&q=the$"))
    expect(page.locator(".result-group")).to_have_count(1)  # the word is in conv-deploy too, not shown
    expect(page.locator(".result-group h2")).to_have_text("conv-quiet")
    expect(page.locator("#search-scope")).to_contain_text("In conversation conv-quiet only")
    page.get_by_label('Words, "a phrase", -excluded, prefix*').fill("the")  # typing keeps the scope
    page.wait_for_timeout(600)
    expect(page.locator(".result-group")).to_have_count(1)
    with page.expect_navigation():
        page.get_by_role("link", name="search everywhere").click()
    expect(page.locator(".result-group")).to_have_count(2)
    assert page.console_errors == []
