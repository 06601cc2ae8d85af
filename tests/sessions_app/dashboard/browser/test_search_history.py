"""B5: search as you type adds one history entry per search typed, not one per pause."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _type_with_pauses(page, *chunks):
    for chunk in chunks:
        with page.expect_response(lambda r: "/search/?" in r.url):
            page.locator("#q").press_sequentially(chunk, delay=20)
        page.wait_for_timeout(700)  # a pause: the search for what is typed so far has answered


def test_three_pauses_in_one_search_make_one_entry_and_back_leaves_it(live_world, login, page, live_server):
    login("sam")
    page.goto(f"{live_server.url}/search/")
    before = page.evaluate("history.length")
    _type_with_pauses(page, "flag ", "checkout ", "QUOKKA")
    expect(page).to_have_url(re.compile(r"/search/\?q=flag%20checkout%20QUOKKA&"))
    assert page.evaluate("history.length") == before + 1
    page.go_back()
    expect(page).to_have_url(f"{live_server.url}/search/")


def test_a_different_search_is_a_new_entry(live_world, login, page, live_server):
    login("sam")
    page.goto(f"{live_server.url}/search/")
    before = page.evaluate("history.length")
    _type_with_pauses(page, "flag")
    page.locator("#q").fill("")
    _type_with_pauses(page, "QUOKKA")
    assert page.evaluate("history.length") == before + 2
