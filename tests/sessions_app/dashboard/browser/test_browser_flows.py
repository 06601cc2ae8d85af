"""End-to-end flows in a real Chromium: each role doing its job, with HTMX and the keyboard."""

import json

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect
from pydantic_ai.messages import ModelMessagesTypeAdapter

from sessions_app.models import Run, TranscriptEntry

pytestmark = pytest.mark.browser


def test_a_support_member_logs_in_and_reads_a_transcript(live_world, login, page, live_server):
    login("sam")
    page.get_by_role("link", name="conv-deploy").click()
    page.wait_for_selector("#m-0")
    assert page.locator(".toolpair").count() >= 3
    assert "DEPLOY_TOKEN=***" in page.content()
    page.emulate_media(color_scheme="dark")
    dark_background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.emulate_media(color_scheme="light")
    assert dark_background != page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert page.console_errors == []


def test_search_as_you_type_then_open_the_hit_in_context(live_world, login, page, live_server):
    login("sam")
    page.keyboard.press("/")  # on the list, "/" focuses the ranked free-text filter
    assert page.evaluate("document.activeElement.id") == "filter-q"
    page.goto(f"{live_server.url}/search/")
    box = page.get_by_label('Words, "a phrase", -excluded, prefix*')
    box.press_sequentially("QUOKKA", delay=30)
    page.wait_for_selector(".result-group")
    assert page.locator("mark").first.inner_text().lower().startswith("quokka")
    hit = page.locator("a.hit").first
    href = hit.get_attribute("href")
    position = href.split("#m-")[1]
    hit.click()
    page.wait_for_url(f"**/c/*/?at={position}#m-{position}")
    target = page.locator(f"#m-{position}")
    assert "hit" in target.get_attribute("class")
    assert target.is_visible()
    assert page.console_errors == []


def test_an_operator_filters_conversations_by_verdict_without_reloading(live_world, login, page, live_server):
    login("olga")
    page.evaluate("window.__same_document = true")
    page.get_by_label("Verdict").select_option("INTERRUPTED TOOL")
    expect(page.locator("#rows [data-primary]")).to_have_count(1)
    assert "verdict=INTERRUPTED%20TOOL" in page.url  # pushed to history, so the filtered view has a link
    assert page.locator("#rows [data-primary]").inner_text() == "conv-deploy"
    assert page.evaluate("window.__same_document") is True  # HTMX swapped the results; no full reload
    assert page.console_errors == []


def test_an_operator_opens_a_repair_and_its_run_audit(live_world, login, page, live_server):
    login("olga")
    page.get_by_role("link", name="Repairs").click()
    page.wait_for_selector("td")
    assert "INTERRUPTED TOOL" in page.content()
    page.locator("a[data-primary]").first.click()
    page.wait_for_selector("h1")
    assert "Audit of run" in page.locator("h1").inner_text()
    assert "not a retry order" in page.content()


def test_an_admin_exports_a_conversation_and_pydantic_ai_loads_it(live_world, login, page, live_server, tmp_path):
    login("ada")
    page.get_by_role("link", name="conv-deploy").click()
    with page.expect_download() as download_info:
        page.get_by_role("link", name="JSON", exact=True).click()
    path = tmp_path / "export.json"
    download_info.value.save_as(path)
    messages = ModelMessagesTypeAdapter.validate_json(path.read_bytes())
    conversation = live_world.deploy
    assert len(messages) == TranscriptEntry.objects.filter(conversation=conversation, summary_artifact=False).count()
    assert json.loads(path.read_text())[0]["kind"] == "request"


def test_j_and_k_move_between_messages_and_slash_focuses_search(live_world, login, page, live_server):
    login("sam")
    page.goto(f"{live_server.url}/c/{live_world.deploy.external_id}/")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.id") == "m-0"
    page.keyboard.press("j")
    page.keyboard.press("j")
    second = page.evaluate("document.activeElement.id")
    page.keyboard.press("k")
    assert page.evaluate("document.activeElement.id") != second
    page.goto(f"{live_server.url}/search/")
    page.locator("h1").click()  # move focus off the search box first
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"


def test_an_admin_reveals_a_credential_in_place(live_world, login, page, live_server):
    login("ada")
    page.goto(f"{live_server.url}/c/{live_world.deploy.external_id}/")
    page.get_by_role("button", name="Reveal masked text").click()
    page.wait_for_selector("text=masked text revealed (audited)")
    assert "sk-live-" in page.content()
    assert page.console_errors == []


def test_infinite_scroll_loads_the_next_page_when_revealed(live_world, login, page, live_server, settings):
    from sessions_app.models import Conversation

    for i in range(60):
        Conversation.objects.create(tenant=live_world.acme, external_id=f"bulk-{i:02d}")
    login("sam")
    assert page.locator("#rows [data-primary]").count() == 50
    page.locator("tr.more").scroll_into_view_if_needed()
    expect(page.locator("#rows [data-primary]")).to_have_count(62)
    assert page.console_errors == []


def test_the_admin_pages_and_a_phone_width(live_world, login, page, live_server):
    login("ada")
    page.get_by_role("link", name="Admin").click()
    page.get_by_role("link", name="API keys").click()
    page.get_by_label("Label").fill("ci")
    page.get_by_role("button", name="Create key").click()
    assert page.locator("#new-key").inner_text().startswith("sdk_")
    run = Run.objects.get(run_id="conv-deploy-run-1")
    page.goto(f"{live_server.url}/r/{run.run_id}/snapshots/")
    page.locator("a[data-primary]").nth(3).click()
    page.goto(f"{live_server.url}/audit/")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/c/{live_world.deploy.external_id}/")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_back_and_forward_after_a_search_and_a_filter_give_whole_pages(live_world, login, page, live_server):
    login("olga")
    page.get_by_label("Verdict").select_option("INTERRUPTED TOOL")
    expect(page.locator("#rows [data-primary]")).to_have_count(1)
    page.goto(f"{live_server.url}/search/")
    box = page.get_by_label('Words, "a phrase", -excluded, prefix*')
    box.press_sequentially("QUOKKA", delay=30)
    page.wait_for_selector(".result-group")
    page.wait_for_url("**/search/?q=QUOKKA*")
    page.locator("a.hit").first.click()
    page.wait_for_selector("#m-0")
    for _ in range(2):
        page.go_back()
        page.wait_for_url("**/search/?q=QUOKKA*")
        page.wait_for_selector(".result-group")
        assert page.locator("link[rel=stylesheet]").count() == 1  # the whole page, styled
        assert page.locator("#q").input_value() == "QUOKKA"  # the box agrees with the results
        page.go_forward()
        page.wait_for_selector("#m-0")
    page.go_back()
    page.wait_for_url("**/search/?q=QUOKKA*")
    page.go_back()  # the empty search page, as first loaded
    page.wait_for_url("**/search/")
    # htmx may reload this entry from the server (a history-cache miss): let that load finish, or the next Back
    # is swallowed by it and the browser stays here.
    page.wait_for_load_state("load")
    expect(page.locator("#q")).to_have_value("")
    try:
        page.go_back()  # the filtered list, pushed by htmx
    except PlaywrightError as error:
        # htmx misses its (disabled) history cache and reloads the page from the server (refreshOnHistoryMiss),
        # which Chromium reports as the Back navigation being aborted in favour of the reload, or, when the reload
        # has already replaced the document, as the navigation's page being detached.
        if "ERR_ABORTED" not in str(error) and "Not attached to an active page" not in str(error):
            raise
    page.wait_for_url("**verdict=INTERRUPTED*")
    page.wait_for_load_state()
    assert page.locator("link[rel=stylesheet]").count() == 1
    assert page.get_by_label("Verdict").input_value() == "INTERRUPTED TOOL"
    expect(page.locator("#rows [data-primary]")).to_have_count(1)
    page.reload()
    assert page.get_by_label("Verdict").input_value() == "INTERRUPTED TOOL"
    assert page.console_errors == []


def test_ids_are_copied_pasted_and_opened_by_url(live_world, login, page, live_server):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    login("sam")
    page.locator("#filter-q").fill("conv-deploy")  # pasting an id into the list filter goes straight to it
    page.wait_for_url(f"{live_server.url}/c/conv-deploy/")
    page.get_by_role("button", name="Copy id").first.click()
    expect(page.get_by_role("button", name="Copied")).to_have_count(1)
    assert page.evaluate("navigator.clipboard.readText()") == "conv-deploy"
    run = Run.objects.filter(conversation=live_world.deploy).order_by("started_at").last()
    page.goto(f"{live_server.url}/search/")
    page.locator("#q").fill(run.run_id)  # a run id pasted into search opens the run in its conversation
    page.wait_for_url(f"**/c/conv-deploy/?steps=*#run-{run.pk}")
    page.goto(f"{live_server.url}/conversations/{live_world.deploy.pk}/")  # an old numeric URL
    page.wait_for_url(f"{live_server.url}/c/conv-deploy/")
    assert page.console_errors == []


def test_the_conversation_page_shows_runs_as_a_waterfall_with_token_totals(live_world, login, page, live_server):
    login("olga")
    page.goto(f"{live_server.url}/c/conv-deploy/")
    if page.locator("details#runs:not([open])").count():  # folded when it would push the transcript down
        page.locator("details#runs > summary").click()
    table = page.get_by_role("table", name="Runs, steps and tool calls over time")
    expect(table.locator("tr.run")).to_have_count(3)
    assert table.locator("tr.step").count() >= 3
    assert "input" in page.locator("#timeline-totals").inner_text()
    assert "scenario-model" in table.inner_text()
    bar = table.locator("tr.run rect").first.bounding_box()
    assert bar and bar["width"] > 0  # drawn, though no inline style is allowed
    table.locator("tr.step a[href^='#m-']").first.click()  # a step links to its message
    assert page.url.split("#")[1].startswith("m-")
    assert page.console_errors == []


def test_every_part_kind_renders_in_the_browser(live_world, login, page, live_server):
    from sessions_app.ingest.payloads import parse_snapshot
    from sessions_app.ingest.service import ingest_snapshots
    from tests.sessions_app.dashboard.test_every_part_kind import every_kind

    payload = {
        "conversation_id": "conv-kinds",
        "run_id": "kinds-run",
        "agent": "kinds",
        "state": "complete",
        "messages": json.loads(ModelMessagesTypeAdapter.dump_json(every_kind())),
    }
    ingest_snapshots(live_world.acme, [parse_snapshot(payload)], source="server", via="api")
    login("sam")
    page.goto(f"{live_server.url}/c/conv-kinds/")
    transcript = page.locator(".transcript")
    expect(transcript).to_contain_text("Summary of previous conversation: the flag is on")
    expect(transcript).to_contain_text("image not shown (image/png, 2.0 KB)")
    expect(transcript).to_contain_text("web_search (built-in)")
    expect(transcript).to_contain_text("id must be a string")
    assert page.console_errors == []


def test_a_new_api_key_is_shown_once_and_a_reload_creates_no_second_key(live_world, login, page, live_server):
    from sessions_app.models import ApiKey

    login("ada")
    page.goto(f"{live_server.url}/settings/api-keys/")
    page.get_by_label("Label").fill("prg-check")
    page.get_by_role("button", name="Create key").click()
    expect(page.locator("#new-key")).to_have_count(1)
    page.reload()
    expect(page.locator("#new-key")).to_have_count(0)  # shown once, after the redirect
    assert ApiKey.objects.filter(tenant=live_world.acme, label="prg-check").count() == 1
    assert page.console_errors == []
