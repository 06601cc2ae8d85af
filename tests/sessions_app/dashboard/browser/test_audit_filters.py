"""Audit-event filters apply as soon as they change (the Filter button stays for use without JavaScript)."""

import pytest

pytestmark = pytest.mark.browser


def test_audit_event_filters_apply_on_change(live_world, login, page, live_server):
    login("olga")
    page.goto(f"{live_server.url}/audit/")
    with page.expect_navigation():
        page.get_by_label("Class").select_option("interrupted_synthesized")
    assert "event_class=interrupted_synthesized" in page.url
    assert page.get_by_label("Class").input_value() == "interrupted_synthesized"
    runs = set(page.locator("tbody td.mono a[href*='run_id=']").all_inner_texts())
    assert runs == {"conv-deploy-run-3"}
    with page.expect_navigation():
        page.get_by_label("From").fill("2999-01-01")
        page.get_by_label("From").dispatch_event("change")
    assert "since=2999-01-01" in page.url
    assert "No audit events match." in page.locator("tbody").inner_text()
    assert page.console_errors == []


def test_audit_events_until_a_date_and_a_bad_range_is_explained(live_world, login, page, live_server):
    login("olga")
    page.goto(f"{live_server.url}/audit/")
    with page.expect_navigation():
        page.get_by_label("Until").fill("2000-01-01")
        page.get_by_label("Until").dispatch_event("change")
    assert "until=2000-01-01" in page.url
    assert page.get_by_label("Until").input_value() == "2000-01-01"
    assert "No audit events match." in page.locator("tbody").inner_text()
    with page.expect_navigation():
        page.get_by_label("From").fill("2001-01-01")
        page.get_by_label("From").dispatch_event("change")
    assert page.get_by_role("alert").inner_text().strip() == "'From' must not be after 'Until'."
    # The refused filter answers 400, which Chromium logs; nothing else may.
    assert [e for e in page.console_errors if "status of 400" not in e] == []
