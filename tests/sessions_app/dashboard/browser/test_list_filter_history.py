"""B6: the list's text filter pushed its search a second time when the field lost focus (the form's `change`
trigger fired on the text input after its own `input` trigger had searched), so Back had to be pressed twice on
the same URL."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_leaving_the_text_filter_sends_and_pushes_nothing_more(live_world, login, page, live_server):
    login("sam")
    with page.expect_response(lambda r: "/conversations/?" in r.url):
        page.get_by_label("Verdict").select_option(index=1)
    with page.expect_response(lambda r: "q=deploy" in r.url):
        page.get_by_label("Text").press_sequentially("deploy", delay=20)
    expect(page).to_have_url(re.compile(r"q=deploy"))
    entries = page.evaluate("history.length")
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url) if "/conversations/?" in request.url else None)
    page.get_by_role("heading", name="Conversations").click()  # the text field loses focus: its change event
    page.wait_for_load_state("networkidle")
    assert sent == [], f"the blur sent {sent}"
    assert page.evaluate("history.length") == entries
    page.go_back()
    expect(page).not_to_have_url(re.compile(r"q=deploy"))  # one Back leaves the search typed
