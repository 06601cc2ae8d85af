"""Screenshots of each main view for the README, on demo data (run by `make screenshots`).

Skipped unless SESSIONDESK_SCREENSHOTS names the target directory. The flows themselves are tested in
test_browser_flows; this module only stages a richer tenant (the demo conversations of seed_demo's generator)
and photographs the pages a new user sees first.
"""

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sessions_app.demo.scenarios import demo_payloads
from sessions_app.ingest.payloads import parse_snapshot
from sessions_app.ingest.service import ingest_snapshots
from sessions_app.management.commands.seed_demo import DEMO_PRICES
from sessions_app.models import Conversation, Run, TranscriptEntry

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.environ.get("SESSIONDESK_SCREENSHOTS"), reason="set SESSIONDESK_SCREENSHOTS=<dir>"),
]


def _target(name: str) -> str:
    return str(Path(os.environ["SESSIONDESK_SCREENSHOTS"]) / f"{name}.png")


@pytest.fixture
def demo_world(live_world):
    with ThreadPoolExecutor(max_workers=1) as pool:  # the scenarios run their own event loop
        payloads = pool.submit(demo_payloads, 30).result()
    # Priced as `make run` prices the demo, so the list and the overview show costs, not "no price".
    live_world.acme.price_overrides = DEMO_PRICES
    live_world.acme.save(update_fields=["price_overrides"])
    ingest_snapshots(live_world.acme, [parse_snapshot(p) for p in payloads["acme"]], source="server", via="api")
    return live_world


def test_the_main_views(demo_world, login, page, live_server, shoot):
    login("ada")
    shoot("conversations")
    page.get_by_label("Verdict").select_option("INTERRUPTED TOOL")
    page.wait_for_timeout(600)
    shoot("conversations-filtered")
    richest = Conversation.objects.filter(tenant=demo_world.acme).order_by("-message_count").first()
    recovered = (
        TranscriptEntry.objects.filter(tenant=demo_world.acme, recovered_from_compaction=True)
        .values_list("conversation__external_id", flat=True)
        .first()
    )
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/c/{recovered or richest.external_id}/")
    shoot("conversation")  # transcript first: the runs panel folded when it would push the first message down
    page.emulate_media(color_scheme="dark")
    shoot("conversation-dark")
    page.emulate_media(color_scheme="light")
    if not page.locator("#runs[open]").count():
        page.locator("#runs > summary").click()
    page.wait_for_selector("table.waterfall")  # the runs timeline loads when its panel opens
    page.locator("#runs").screenshot(path=_target("conversation-runs"))
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/search/")
    page.locator("#q").press_sequentially("invoice", delay=40)
    page.wait_for_selector(".result-group")
    page.wait_for_timeout(400)
    shoot("search")
    page.goto(f"{live_server.url}/repairs/")
    shoot("repairs")
    run = Run.objects.filter(tenant=demo_world.acme, snapshots__isnull=False).order_by("-snapshots__seq").first()
    page.goto(f"{live_server.url}/r/{run.run_id}/snapshots/")
    shoot("snapshots")
    page.locator("a[data-primary]").last.click()
    shoot("snapshot-diff")
    page.goto(f"{live_server.url}/audit/")
    shoot("audit-events")
    page.goto(f"{live_server.url}/overview/")  # its default range: the demo runs are seeded relative to today
    shoot("overview", full_page=True)
    page.goto(f"{live_server.url}/settings/api-keys/")
    page.get_by_label("Label").fill("billing backend")
    page.get_by_role("button", name="Create key").click()
    shoot("admin-api-keys")
    page.goto(f"{live_server.url}/settings/members/")
    shoot("admin-members")
    page.set_viewport_size({"width": 390, "height": 844})
    phone = {
        "conversation-phone": f"/c/{richest.external_id}/",
        "conversations-phone": "/conversations/",
        "search-phone": "/search/?q=invoice",
        "overview-phone": "/overview/",
        "repairs-phone": "/repairs/",
        "audit-events-phone": "/audit/",
    }
    for name, path in phone.items():
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        shoot(name)
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 1280, "height": 800})
    dark = {
        "conversations-dark": "/conversations/",
        "overview-dark": "/overview/",
        "search-dark": "/search/?q=invoice",
        "repairs-dark": "/repairs/",
        "audit-events-dark": "/audit/",
    }
    for name, path in dark.items():
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        shoot(name)
