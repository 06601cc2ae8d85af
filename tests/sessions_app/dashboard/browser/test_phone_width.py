"""Verdicts stay visible at phone width: the verdict column comes right after the
conversation, so its badges are on screen without scrolling sideways (later columns may still scroll)."""

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_verdicts_are_on_screen_at_phone_width(live_world, login, page, live_server):
    page.set_viewport_size({"width": 360, "height": 740})
    login("olga")
    badge = page.locator("#rows tr", has_text="conv-deploy").locator("td.verdicts .badge").first
    expect(badge).to_be_visible()
    box = badge.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360, box
    assert page.console_errors == []
