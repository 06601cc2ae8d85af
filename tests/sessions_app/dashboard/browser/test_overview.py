"""The overview in Chromium: reached from the navigation, a range chosen in the form, charts drawn as SVG
whose numbers open as tables, and a bad range explained."""

import pytest

pytestmark = pytest.mark.browser


def test_the_overview_charts_a_chosen_range_with_its_numbers_as_tables(live_world, login, page, live_server):
    login("sam")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Overview").click()
    page.wait_for_url(f"{live_server.url}/overview/")
    assert page.locator("svg.chart").count() == 5
    assert page.get_by_label("Until").input_value()  # the last 30 days by default
    with page.expect_navigation():
        page.get_by_label("From").fill("2026-01-01")
        page.get_by_label("From").dispatch_event("change")
    with page.expect_navigation():
        page.get_by_label("Until").fill("2026-01-10")
        page.get_by_label("Until").dispatch_event("change")
    assert "since=2026-01-01" in page.url and "until=2026-01-10" in page.url
    assert page.locator("#total-runs").inner_text() == "4"
    assert page.locator("#total-interrupted").inner_text() == "1"
    # Every chart has drawn bars (an interrupted run's bar among them) that a person can hover for its value.
    runs_chart = page.get_by_role("img", name="Runs per day, stacked by verdict")
    assert runs_chart.locator("rect.s-interrupted-tool").count() == 1
    assert "2026-01-05 · INTERRUPTED TOOL: 1" in runs_chart.locator("rect.s-interrupted-tool title").text_content()
    # The numbers behind a chart are a table, folded until asked for.
    table = page.locator("#interrupted-table")
    assert not table.is_visible()
    page.get_by_text("Interrupted tool calls as a table").click()
    assert table.is_visible()
    assert table.get_by_role("row", name="2026-01-05").get_by_role("cell").inner_text() == "1"
    assert table.get_by_role("row").count() == 11  # a header and one row per day
    tools = page.locator("#interrupted-tools-table")
    assert tools.get_by_role("row", name="deploy").get_by_role("cell").inner_text() == "1"
    agents = page.locator("#agents-table")
    assert agents.get_by_role("row", name="deploy_agent 3").is_visible()
    assert page.console_errors == []


def test_a_reversed_range_is_explained_and_draws_nothing(live_world, login, page, live_server):
    login("sam")
    page.goto(f"{live_server.url}/overview/?since=2026-02-01&until=2026-01-01")
    assert page.get_by_role("alert").inner_text().strip() == "'From' must not be after 'Until'."
    assert page.locator("svg.chart").count() == 0
    assert page.get_by_label("From").input_value() == "2026-02-01"
