"""B8: at a phone width of 390 px no page is wider than the viewport (tables and charts scroll inside their own
box, forms fit their cards), and chart labels stay at least 10 px high."""

import pytest

from tests.sessions_app.dashboard.pages import tenant_pages

pytestmark = pytest.mark.browser

WIDTH = 390
# Not pages a person reads: downloads, a fragment, and the old URLs that redirect to pages already listed.
NOT_PAGES = {
    "audit csv",
    "export download",
    "export conversation",
    "export review",
    "timeline",
    "legacy conversation url",
    "legacy run url",
}


def test_no_page_is_wider_than_a_phone(live_world, login, page, live_server):
    pages = [
        p for p in tenant_pages(live_world.acme, live_world.deploy) if p.method == "GET" and p.name not in NOT_PAGES
    ]
    page.set_viewport_size({"width": WIDTH, "height": 844})
    login("ada")
    too_wide = {}
    for item in [*pages, type(pages[0])("conversation with timeline", pages[1].url + "?timeline=inline", "GET", "")]:
        page.goto(live_server.url + item.url)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > WIDTH:
            too_wide[item.name] = width
    assert too_wide == {}, f"pages wider than {WIDTH} px: {too_wide}"


def test_chart_labels_are_at_least_10_px_high_at_phone_width(live_world, login, page, live_server):
    page.set_viewport_size({"width": WIDTH, "height": 844})
    login("ada")
    page.goto(f"{live_server.url}/overview/")
    heights = page.eval_on_selector_all("svg.chart text.tick", "els => els.map(e => e.getBoundingClientRect().height)")
    assert heights, "the overview draws tick labels"
    assert min(heights) >= 10, f"smallest chart label {min(heights):.1f} px"
