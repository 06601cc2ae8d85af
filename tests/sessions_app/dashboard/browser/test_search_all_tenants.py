"""People in several tenants can search all of theirs; a hit in another tenant offers the switch."""

import pytest
from playwright.sync_api import expect

from sessions_app.models import Membership

pytestmark = pytest.mark.browser


def test_a_member_of_two_tenants_searches_both(live_world, login, page, live_server):
    Membership.objects.create(tenant=live_world.globex, user=live_world.users["support"], role="support")
    login("sam")
    page.goto(f"{live_server.url}/search/")
    page.get_by_label('Words, "a phrase", -excluded, prefix*').fill("lookup")
    expect(page.locator(".result-group")).to_have_count(1)  # the current tenant only
    page.get_by_label("All my tenants").check()
    expect(page.locator(".result-group")).to_have_count(2)
    tenants = sorted(page.locator(".result-group .tenant").all_inner_texts())
    assert tenants == ["acme", "globex"]
    page.locator(".result-group", has_text="conv-globex").locator("a.hit").first.click()
    page.get_by_role("button", name="Switch to Globex and open it").click()
    expect(page.get_by_role("heading", name="Transcript")).to_be_visible()
    assert "/c/conv-globex/" in page.url
    # The offer page answers 404 (the conversation is not in the tenant the link was opened in): Chromium logs it.
    assert [e for e in page.console_errors if "status of 404" not in e] == []
