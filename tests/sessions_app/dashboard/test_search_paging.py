"""The search page says how many messages match in all ("10 of 22") and links on to the next page, with or
without JavaScript; a changed cursor is refused with the reason."""

import html
import re

import pytest

from tests.search_app.factories import add_messages, make_conversation, make_run


@pytest.fixture
def pelicans(world):
    for number in range(2):
        run = make_run(make_conversation(world.acme, f"conv-pelican-{number}"), f"run-pelican-{number}")
        add_messages(run, [f"pelican sighting {i} " + "pelican " * (i % 4) for i in range(11)])


def _next_url(page: str) -> str:
    match = re.search(r'<a id="next-page" rel="next" href="([^"]+)"', page)
    assert match, "no next page link"
    return html.unescape(match.group(1))


def test_the_count_is_of_every_match_and_the_next_link_walks_the_pages(world, as_role, pelicans):
    client = as_role("support")
    first = client.get("/search/?q=pelican").content.decode()
    assert "10 of 22 matching messages in 2 conversations" in first
    assert "Next page (11–20 of 22)" in first
    second = client.get(_next_url(first)).content.decode()
    assert "11–20 of 22 matching messages in 2 conversations" in second
    assert "← First page" in second
    third = client.get(_next_url(second)).content.decode()
    assert "21–22 of 22 matching messages" in third and 'id="next-page"' not in third
    hits = [re.findall(r'href="(/c/[^"]+\?at=\d+)#', page) for page in (first, second, third)]
    every = [hit for page in hits for hit in page]
    assert len(every) == len(set(every)) == 22


def test_past_the_count_bound_the_page_says_plus_and_still_walks_every_match(world, as_role, pelicans, settings):
    settings.SESSIONDESK_SEARCH_COUNT_BOUND = 15
    client = as_role("support")
    first = client.get("/search/?q=pelican").content.decode()
    assert "10 of 15+ matching messages in" in first and "Next page (11–20 of 15+)" in first
    second = client.get(_next_url(first)).content.decode()
    assert "11–20 of 15+ matching messages" in second
    third = client.get(_next_url(second)).content.decode()
    assert "21–22 of 15+ matching messages" in third and 'id="next-page"' not in third


def test_the_next_link_answers_htmx_with_the_results_region_only(world, as_role, pelicans):
    client = as_role("support")
    next_url = _next_url(client.get("/search/?q=pelican").content.decode())
    body = client.get(next_url, HTTP_HX_REQUEST="true").content.decode()
    assert body.strip().startswith('<section id="results"') and "11–20 of 22" in body


def test_a_next_page_while_typing_repeats_the_query_as_searched(world, as_role, pelicans):
    typed = as_role("support").get("/search/?q=pelic", HTTP_HX_REQUEST="true").content.decode()
    assert "10 of 22" in typed
    assert "q=pelic%2A" in _next_url(typed)


def test_a_changed_cursor_is_refused_with_the_reason(world, as_role, pelicans):
    client = as_role("support")
    next_url = _next_url(client.get("/search/?q=pelican").content.decode())
    response = client.get(next_url[:-4])
    assert response.status_code == 400
    assert "The cursor is not valid" in response.content.decode()
