"""`?` opens a keyboard help overlay; Escape closes it; typing `?` in a field types it."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_question_mark_opens_the_keyboard_help(live_world, login, page, live_server):
    login("sam")
    help_dialog = page.locator("#keys-help")
    expect(help_dialog).to_be_hidden()
    page.keyboard.press("?")
    expect(help_dialog).to_be_visible()
    expect(help_dialog.get_by_role("heading", name="Keyboard")).to_be_visible()
    assert "next / previous message" in help_dialog.inner_text()
    page.keyboard.press("Escape")
    expect(help_dialog).to_be_hidden()
    page.goto(f"{live_server.url}/search/")
    box = page.get_by_label('Words, "a phrase", -excluded, prefix*')
    box.click()
    box.press("?")
    expect(help_dialog).to_be_hidden()
    assert box.input_value() == "?"
    assert page.console_errors == []
