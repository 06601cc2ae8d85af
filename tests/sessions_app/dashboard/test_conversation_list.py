"""The conversation list: filters that narrow, sorting, keyset pagination with plain links and HTMX rows."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from sessions_app.dashboard import conversation_list
from sessions_app.models import Conversation, Run


def _listed(response) -> list[str]:
    return re.findall(r'data-primary href="/c/[^"]+/">([^<]+)</a>', response.content.decode())


def test_the_list_shows_the_tenants_conversations_with_runs_states_and_verdicts(world, as_role):
    response = as_role("support").get("/conversations/")
    page = response.content.decode()
    assert sorted(_listed(response)) == ["conv-deploy", "conv-quiet"]
    assert "INTERRUPTED TOOL" in page
    assert "interrupted" in page
    assert "deploy_agent" in page


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("verdict=INTERRUPTED+TOOL", ["conv-deploy"]),
        ("state=interrupted", ["conv-deploy"]),
        ("agent=weather_agent", ["conv-quiet"]),
        ("has_repairs=on", ["conv-deploy"]),
        ("verdict=READY", []),
        ("until=2000-01-01", []),
    ],
)
def test_each_filter_narrows_the_list(world, as_role, query, expected):
    assert sorted(_listed(as_role("support").get(f"/conversations/?{query}"))) == expected


def test_a_time_range_keeps_conversations_with_a_run_started_inside_it(world, as_role):
    # The runs' own times (B2/B9), as the overview counts them: not when a row was written.
    Run.objects.filter(conversation=world.quiet).update(started_at=datetime(2025, 3, 1, 12, tzinfo=UTC))
    Run.objects.filter(conversation=world.deploy).update(started_at=datetime(2025, 3, 5, 12, tzinfo=UTC))
    client = as_role("support")
    assert _listed(client.get("/conversations/?since=2025-03-01&until=2025-03-01")) == ["conv-quiet"]
    assert _listed(client.get("/conversations/?since=2025-03-02")) == ["conv-deploy"]


def test_a_reversed_time_range_is_a_clear_error(world, as_role):
    response = as_role("support").get("/conversations/?since=2025-03-02&until=2025-03-01")
    assert response.status_code == 400
    assert b"must not be after" in response.content


def test_free_text_lists_conversations_by_search_rank(world, as_role):
    response = as_role("support").get("/conversations/?q=Krak%C3%B3w")
    assert _listed(response) == ["conv-quiet"]


def _many(world, count: int) -> list[Conversation]:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(count):
        conversation = Conversation.objects.create(tenant=world.acme, external_id=f"bulk-{i:02d}")
        Conversation.objects.filter(pk=conversation.pk).update(last_activity_at=base + timedelta(minutes=i % 3))
        rows.append(conversation)
    return rows


def test_keyset_pages_walk_every_conversation_once_in_order_through_plain_links(world, as_role, monkeypatch):
    monkeypatch.setattr(conversation_list, "PAGE_SIZE", 2)
    _many(world, 7)  # several share a last activity: the id breaks ties
    Conversation.objects.filter(tenant=world.acme, external_id__startswith="conv-").delete()
    client = as_role("support")
    seen: list[str] = []
    url = "/conversations/?sort=oldest"
    while url:
        response = client.get(url)
        seen += _listed(response)
        link = re.search(r'<a href="(/conversations/\?[^"]*cursor=[^"]+)">Next page</a>', response.content.decode())
        url = link.group(1).replace("&amp;", "&") if link else None
    ordered = Conversation.objects.filter(tenant=world.acme).order_by("last_activity_at", "pk")
    expected = list(ordered.values_list("external_id", flat=True))
    assert seen == expected
    assert len(seen) == 7


def test_the_next_page_is_fetched_when_revealed_and_answered_with_rows_only(world, as_role, monkeypatch):
    monkeypatch.setattr(conversation_list, "PAGE_SIZE", 1)
    client = as_role("support")
    first = client.get("/conversations/").content.decode()
    trigger = re.search(r'<tr class="more" hx-get="([^"]+)" hx-trigger="revealed"', first)
    assert trigger
    more = client.get(trigger.group(1).replace("&amp;", "&"), HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in more and "<table" not in more
    assert more.strip().startswith("<tr")
    assert len(re.findall("data-primary", more)) == 1


def test_a_filter_change_over_htmx_replaces_the_results_region_only(world, as_role):
    response = as_role("support").get("/conversations/?state=interrupted", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.strip().startswith('<section id="results"')
    assert "<html" not in body
    assert _listed(response) == ["conv-deploy"]


def test_a_forged_cursor_is_refused_without_a_crash(world, as_role):
    response = as_role("support").get("/conversations/?cursor=bm90LWEtY3Vyc29y")
    assert response.status_code == 400
    assert b"not valid" in response.content


def test_sorting_by_size_puts_the_longest_conversation_first(world, as_role):
    assert _listed(as_role("support").get("/conversations/?sort=largest"))[0] == "conv-deploy"
