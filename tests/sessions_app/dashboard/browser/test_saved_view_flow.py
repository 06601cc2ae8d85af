"""Saving a view in Chromium (issue 26), on the seeded demo: an admin narrows the list by a numeric range, saves
the filter under a name, finds it in the navigation, opens it on the same rows, and deletes it from the nav."""

import re

import pytest
from playwright.sync_api import expect

from sessions_app.audit.vocabulary import EventClass
from sessions_app.management.commands.seed_demo import DEMO_PASSWORD
from sessions_app.models import AuditEvent, Conversation, SavedView

pytestmark = pytest.mark.browser


def test_a_filter_saved_as_a_view_is_in_the_nav_opens_the_same_rows_and_can_be_deleted(demo, login, page):
    tokens = sorted(Conversation.objects.filter(tenant__slug="acme").values_list("total_tokens", flat=True))
    threshold = tokens[len(tokens) // 2]  # at least the middle conversation's tokens: some rows, not all
    expected = sum(1 for count in tokens if count >= threshold)
    assert 0 < expected < len(tokens), tokens
    login("acme-admin", DEMO_PASSWORD)
    rows = page.locator("tr[data-nav-item]")
    expect(rows).to_have_count(len(tokens))
    saved_views = page.get_by_role("navigation", name="Saved views")
    expect(saved_views).to_have_count(0)

    page.locator("details.ranges summary").click()
    with page.expect_response(lambda r: "tokens_min=" in r.url):
        tokens_from = page.locator("fieldset.range", has_text="Tokens").get_by_label("from")
        tokens_from.fill(str(threshold))
        tokens_from.press("Tab")  # its change event applies the filter
    expect(page).to_have_url(re.compile(rf"tokens_min={threshold}\b"))
    expect(rows).to_have_count(expected)
    filtered = sorted(rows.locator("a[data-primary]").all_inner_texts())

    page.get_by_label("Save this filter as a view").fill("Heavy talkers")
    page.get_by_role("button", name="Save view").click()
    link = saved_views.get_by_role("link", name="Heavy talkers")
    expect(link).to_have_attribute("aria-current", "page")  # the list shown is the view's filter
    expect(rows).to_have_count(expected)
    view = SavedView.objects.get(tenant__slug="acme")
    assert f"tokens_min={threshold}" in view.query.split("&")  # with the form's sort, as the list's URL had it

    page.get_by_role("link", name="Reset").click()
    expect(rows).to_have_count(len(tokens))
    expect(link).not_to_have_attribute("aria-current", "page")
    link.click()
    expect(page).to_have_url(re.compile(rf"/conversations/\?{re.escape(view.query)}$"))
    expect(rows).to_have_count(expected)
    assert sorted(rows.locator("a[data-primary]").all_inner_texts()) == filtered

    page.get_by_role("button", name="Delete view Heavy talkers").click()
    expect(page).to_have_url(re.compile(r"/conversations/$"))
    expect(page.locator(".messages")).to_contain_text("View 'Heavy talkers' deleted.")
    expect(saved_views).to_have_count(0)
    assert not SavedView.objects.exists()
    audited = AuditEvent.objects.filter(subject=f"saved_view:{view.pk}").order_by("pk")
    assert list(audited.values_list("event_class", "actor")) == [
        (EventClass.VIEW_SAVED, "acme-admin"),
        (EventClass.VIEW_DELETED, "acme-admin"),
    ]
    assert page.console_errors == []
