"""The conversation page comes first; a runs timeline too tall to sit above the first message is folded and loads as
a fragment when its panel is opened; without JavaScript a link (and any link into the timeline: a run's steps,
every run) gives the page with its timeline in place."""

import re

import pytest

pytestmark = pytest.mark.django_db


def test_the_page_holds_the_transcript_and_a_placeholder_that_loads_the_timeline(world, as_role):
    page = as_role("support").get("/c/conv-deploy/").content.decode()
    assert 'id="m-0"' in page
    assert '<tr class="run ' not in page
    assert '<details class="runs-panel" id="runs">' in page  # folded: its three runs would push #m-0 down
    placeholder = re.search(
        r'<p class="small muted" hx-get="(/c/conv-deploy/timeline)" hx-trigger="toggle once from:#runs"', page
    )
    assert placeholder
    assert '<a href="?timeline=inline#timeline">Show the runs timeline</a>' in page


def test_the_fragment_is_the_timeline_alone_and_never_cached(world, as_role):
    response = as_role("support").get("/c/conv-deploy/timeline", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="timeline">') and "<html" not in body
    assert body.count('<tr class="run depth-0"') == 3
    assert "no-store" in response["Cache-Control"] and "HX-Request" in response["Vary"]


def test_the_fragment_opened_as_a_page_goes_to_the_page_with_its_timeline_in_place(world, as_role):
    client = as_role("support")
    response = client.get("/c/conv-deploy/timeline")
    assert response.status_code == 302 and response["Location"] == "/c/conv-deploy/?timeline=inline#timeline"
    page = client.get("/c/conv-deploy/?timeline=inline").content.decode()
    assert "<html" in page and page.count('<tr class="run depth-0"') == 3 and "hx-trigger" not in page


def test_another_tenants_timeline_is_a_404(world, as_role):
    assert as_role("outsider").get("/c/conv-deploy/timeline", HTTP_HX_REQUEST="true").status_code == 404
