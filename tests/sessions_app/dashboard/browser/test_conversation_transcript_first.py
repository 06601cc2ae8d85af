"""The conversation page on the seeded demo (issue 26), in Chromium at 1440×900: the transcript comes first, a
permalink stays in view (B7), the waterfall is scaled per run with the open-ended run clipped and marked (B4), and
the interrupted call only a snapshot holds is in the timeline (B15)."""

import pytest
from playwright.sync_api import expect

from sessions_app.management.commands.seed_demo import DEMO_PASSWORD
from sessions_app.models import Conversation

pytestmark = pytest.mark.browser

WIDE = {"width": 1440, "height": 900}


def _open(page, login, path: str, user: str):
    page.set_viewport_size(WIDE)
    login(user, DEMO_PASSWORD)
    page.goto(page.url.split("/conversations/")[0] + path)
    page.wait_for_load_state("networkidle")


def _open_runs(page):
    if page.locator("#runs > summary").count():  # (the page before issue 26 had no panel: its timeline loaded)
        page.locator("#runs > summary").click()
    expect(page.get_by_role("table", name="Runs, steps and tool calls over time")).to_be_visible()


def test_the_first_message_is_in_view_on_a_five_run_conversation(demo, login, page):
    assert Conversation.objects.get(external_id="demo-0-001").run_count == 5
    _open(page, login, "/c/demo-0-001/", "globex-operator")
    expect(page.locator("#m-0")).to_be_in_viewport()
    assert page.locator("#m-0").bounding_box()["y"] + 40 < WIDE["height"]
    # The paired-result stubs are notes behind the one toggle.
    stubs = page.locator("article.msg.folded")
    assert stubs.count() > 0 and not stubs.first.is_visible()
    page.get_by_label("Show compaction and pairing notes").check()
    expect(stubs.first).to_be_visible()
    assert page.console_errors == []


def test_a_permalink_lands_in_view_and_stays_there(demo, login, page):
    """B7: /c/demo-0-000/?at=6#m-6 ended 1,147 px down: the timeline was inserted above it after the scroll."""
    _open(page, login, "/c/demo-0-000/?at=6#m-6", "acme-operator")
    target = page.locator("#m-6")
    expect(target).to_be_in_viewport()
    box = target.bounding_box()
    assert 0 <= box["y"] < WIDE["height"] - 40, box
    _open_runs(page)  # the timeline loads inside its panel when opened, never above the message on its own


def test_the_waterfall_is_scaled_per_run_and_clips_the_open_ended_run(demo, login, page):
    """B4: a run left "running" (its last part stamped when it was stored, days later) filled the waterfall, the
    other runs' 7-s steps were 1-px ticks and the total read hundreds of hours."""
    _open(page, login, "/c/demo-0-001/", "globex-operator")
    _open_runs(page)
    table = page.get_by_role("table", name="Runs, steps and tool calls over time")
    widths = table.locator("tr.step rect").evaluate_all("els => els.map(e => Number(e.getAttribute('width')))")
    assert widths and min(widths) >= 100, widths  # each step is a readable share of its own run's axis
    open_run = table.locator("tr.run", has_text="demo-0-001-run-1-saved")
    expect(open_run.locator("rect.run.open")).to_have_count(1)
    expect(open_run).to_contain_text("no end recorded")
    expect(open_run.locator("td.num").first).to_contain_text("open")
    total = table.locator("tfoot td.num").first.inner_text()
    assert " h" not in total and "open" in total, total
    expect(page.locator("#timeline-totals")).to_contain_text("1 open-ended run")


def test_the_interrupted_call_is_in_the_timeline(demo, login, page):
    """B15: run demo-0-001-run-1 (INTERRUPTED TOOL) listed only lookup and search_docs; deploy was only in the
    transcript."""
    _open(page, login, "/c/demo-0-001/", "globex-operator")
    _open_runs(page)
    table = page.get_by_role("table", name="Runs, steps and tool calls over time")
    deploy = table.locator("tr.tool", has_text="deploy")
    expect(deploy).to_have_count(1)
    expect(deploy).to_contain_text("interrupted")
    deploy.get_by_role("link", name="in place").click()
    assert page.url.split("#")[1].startswith("interrupted-")
    expect(page.locator("#" + page.url.split("#")[1])).to_be_in_viewport()
