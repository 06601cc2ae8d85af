"""In Chromium: the search page counts every match ("10 of 22"), "Next page" swaps in the next results and puts
the page in the address bar, Back returns to the first page, and the same link works with JavaScript off."""

import re

import pytest
from playwright.sync_api import expect

from tests.search_app.factories import add_messages, make_conversation, make_run

pytestmark = pytest.mark.browser


@pytest.fixture
def pelicans(live_world):
    for number in range(2):
        run = make_run(make_conversation(live_world.acme, f"conv-pelican-{number}"), f"run-pelican-{number}")
        add_messages(run, [f"pelican sighting {i} " + "pelican " * (i % 4) for i in range(11)])


def test_next_page_walks_the_results_and_back_returns(live_world, pelicans, login, page, live_server):
    login("sam")
    page.goto(f"{live_server.url}/search/?q=pelican")
    count = page.locator("#search-count")
    expect(count).to_contain_text("10 of 22 matching messages in 2 conversations")
    first_hits = page.locator("a.hit").all_inner_texts()
    page.get_by_role("link", name=re.compile(r"Next page")).click()
    expect(count).to_contain_text("11–20 of 22")
    expect(page).to_have_url(re.compile(r".*cursor=.*"))
    assert not set(page.locator("a.hit").all_inner_texts()) & set(first_hits)
    page.get_by_role("link", name=re.compile(r"Next page")).click()
    expect(count).to_contain_text("21–22 of 22")
    expect(page.get_by_role("link", name=re.compile(r"Next page"))).to_have_count(0)
    page.go_back()
    expect(count).to_contain_text("11–20 of 22")
    page.get_by_role("link", name="← First page").click()
    expect(count).to_contain_text("10 of 22")
    assert page.console_errors == []


def test_next_page_works_without_javascript(live_world, pelicans, page_without_javascript, live_server):
    page = page_without_javascript
    page.goto(f"{live_server.url}/search/?q=pelican")
    expect(page.locator("#search-count")).to_contain_text("10 of 22")
    with page.expect_navigation():
        page.get_by_role("link", name=re.compile(r"Next page")).click()
    expect(page.locator("#search-count")).to_contain_text("11–20 of 22")
