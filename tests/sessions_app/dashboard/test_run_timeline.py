"""The conversation page shows its runs as a timeline: steps, models, token totals, tool calls nested."""

import json
import re

import pytest

from sessions_app.models import TranscriptEntry

pytestmark = pytest.mark.django_db


def _stored_input_tokens(conversation) -> int:
    total = 0
    for data in TranscriptEntry.objects.filter(conversation=conversation, summary_artifact=False).values_list(
        "message__data", flat=True
    ):
        message = json.loads(data)
        if message["kind"] == "response":
            total += message["usage"]["input_tokens"]
    return total


def test_the_timeline_totals_the_tokens_of_every_response(world, as_role):
    page = as_role("support").get(f"/c/{world.deploy.external_id}/?timeline=inline").content.decode()
    totals = re.search(r'<p class="small" id="timeline-totals">(.*?)</p>', page).group(1)
    assert f"<strong>{_stored_input_tokens(world.deploy):,}</strong> input" in totals
    assert page.count('<tr class="run depth-0"') == 3
    assert page.count('<tr class="step ') >= 3
    assert "scenario-model" in page  # the model name each response carries
    # Tool calls sit under the step that made them, linked to their result.
    returned = r'Tool <code>lookup</code> <span class="badge plain">returned</span> · <a href="#m-\d+">result'
    assert re.search(returned, page)


def test_bars_are_svg_without_inline_style(world, as_role):
    page = as_role("support").get(f"/c/{world.deploy.external_id}/?timeline=inline").content.decode()
    assert '<rect class="run"' in page
    assert "style=" not in page


def test_steps_past_the_row_budget_fold_into_a_link_that_shows_them(world, as_role, monkeypatch):
    from sessions_app.dashboard import timeline_html

    monkeypatch.setattr(timeline_html, "STEP_ROWS", 0)
    client = as_role("support")
    page = client.get(f"/c/{world.deploy.external_id}/timeline", HTTP_HX_REQUEST="true").content.decode()
    assert page.count('<tr class="run depth-0"') == 3
    assert '<tr class="step ' not in page
    links = re.findall(r'<a class="fold" href="\?steps=([^"#]+)#run-(\d+)">Show its (\d+) steps?', page)
    assert len(links) >= 2  # every run that has steps (one of the three has none)
    run_id, run_pk, steps = links[0]
    expanded = client.get(f"/c/{world.deploy.external_id}/?steps={run_id}").content.decode()
    assert expanded.count('<tr class="step ') == int(steps)
    assert expanded.count('<a class="fold"') == len(links) - 1


def test_runs_past_the_row_budget_fold_behind_show_all_and_a_run_link_still_lands_on_its_row(
    world, as_role, monkeypatch
):
    from sessions_app.dashboard import timeline_html
    from sessions_app.models import Run

    monkeypatch.setattr(timeline_html, "RUN_ROWS", 1)
    client = as_role("support")
    url = f"/c/{world.deploy.external_id}/"
    page = client.get(url + "timeline", HTTP_HX_REQUEST="true").content.decode()
    assert page.count('<tr class="run ') == 1
    assert "Show all 3 runs</a> (2 more runs; the totals above count them)" in page
    assert "3 runs · " in page  # the totals still count every run
    assert client.get(url + "?runs=all").content.decode().count('<tr class="run ') == 3
    last = Run.objects.filter(conversation=world.deploy).order_by("-started_at", "-pk").first()
    landed = client.get(url, {"steps": last.run_id}).content.decode()
    assert f'id="run-{last.pk}"' in landed
