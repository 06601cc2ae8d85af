"""The first screens of a fresh `make run` (issue 26), in Chromium on the seeded demo: a list row shows its first
prompt, tokens, cost and duration; the overview has data in its default range; every drill-down lands on as many
conversations as it counted; a run left running turns STUCK once it has been quiet for the tenant's limit."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from sessions_app.audit.vocabulary import Verdict
from sessions_app.demo.plans import DEMO_SYSTEM_PROMPT
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.management.commands.seed_demo import DEMO_PASSWORD
from sessions_app.models import Conversation, Run, RunState, RunVerdict, Tenant

pytestmark = pytest.mark.browser


def _rows(page):
    return page.locator("tr[data-nav-item]")


def test_a_demo_row_shows_its_first_prompt_tokens_cost_and_duration(demo, login, page):
    login("acme-support", DEMO_PASSWORD)
    conversation = Conversation.objects.filter(tenant__slug="acme").order_by("external_id").first()
    assert conversation is not None and conversation.first_user_text and conversation.total_tokens > 0
    row = _rows(page).filter(has=page.get_by_role("link", name=conversation.external_id, exact=True))
    assert row.locator("[data-preview]").inner_text().startswith(conversation.first_user_text[:40])
    assert row.locator('[data-col="tokens"]').inner_text() == f"{conversation.total_tokens:,}"
    assert row.locator('[data-col="cost"]').inner_text().startswith("$")  # the demo's negotiated prices
    assert row.locator('[data-col="duration"]').inner_text().split()[-1] in {"ms", "s", "min", "h", "d"}
    assert page.console_errors == []


def test_the_overview_has_data_in_its_default_range(demo, login, page):
    login("acme-operator", DEMO_PASSWORD)
    page.goto(page.url.replace("/conversations/", "/overview/"))
    runs = Run.objects.filter(tenant__slug="acme").count()
    expect(page.locator("#total-runs")).to_have_text(f"{runs:,}")
    assert runs > 0
    expect(page.locator("#total-cost")).to_contain_text("$")
    assert page.locator("#agents-table tbody tr a").count() > 0
    assert page.console_errors == []


def test_every_overview_drill_down_lands_on_as_many_conversations_as_it_counted(demo, login, page):
    login("acme-operator", DEMO_PASSWORD)
    page.goto(page.url.replace("/conversations/", "/overview/"))
    links = page.locator("#agents-table tbody tr")
    counted = [
        (row.locator("a").get_attribute("href"), int(row.locator("[data-conversations]").inner_text()))
        for row in links.all()
    ]
    assert counted and sum(n for _, n in counted) > 0
    for href, conversations in counted:
        page.goto(page.url.split("/overview/")[0] + str(href))
        expect(_rows(page)).to_have_count(conversations)


def test_a_run_left_running_is_stuck_a_day_later(demo, login, page):
    # The demo's open runs also removed an orphan result, a graver verdict: an agent starts one more and stops.
    globex = Tenant.objects.get(slug="globex")
    parts = [
        {"part_kind": "system-prompt", "content": DEMO_SYSTEM_PROMPT},
        {"part_kind": "user-prompt", "content": "Is the deploy done?"},
    ]
    payload = {
        "conversation_id": "left-running",
        "run_id": "left-running-1",
        "agent": "ops_agent",
        "messages": [{"kind": "request", "parts": parts}],
    }
    ingest_snapshots(globex, [parse_snapshot(payload)], source="server", via="api")
    running = Run.objects.get(tenant=globex, run_id="left-running-1")
    assert running.state == RunState.RUNNING
    login("globex-operator", DEMO_PASSWORD)
    row = _rows(page).filter(has=page.get_by_role("link", name="left-running", exact=True))
    stuck = row.locator(f'[data-verdict="{Verdict.STUCK}"]')
    expect(row).to_have_count(1)
    expect(stuck).to_have_count(0)
    # A day passes with no snapshot from that run.
    Run.objects.filter(pk=running.pk).update(last_snapshot_at=timezone.now() - timedelta(hours=25))
    RunVerdict.objects.filter(run=running).update(recheck_at=timezone.now() - timedelta(seconds=1))
    page.reload()
    expect(stuck).to_have_count(1)
    page.goto(page.url.replace("/conversations/", "/overview/"))
    expect(page.locator("#runs-heading ~ ul.legend")).to_contain_text(Verdict.STUCK)
    assert page.console_errors == []
