"""Conversations and runs are addressed by their own ids; old numeric URLs redirect; awkward ids round-trip."""

from urllib.parse import quote_plus

import pytest
from django.urls import reverse

from sessions_app.dashboard.ids import conversation_url, quote_id, run_url
from sessions_app.models import Run
from tests.sessions_app.dashboard.conftest import ingest_plan, quiet_plan

pytestmark = pytest.mark.django_db

AWKWARD = "team a/c 42?x=1#frag %20 ünï"


def test_quoting_matches_djangos_reverse():
    assert quote_id(AWKWARD) == "team%20a/c%2042%3Fx=1%23frag%20%2520%20%C3%BCn%C3%AF"
    assert conversation_url(AWKWARD) == reverse("conversation", args=[AWKWARD])
    assert run_url(AWKWARD) == reverse("run", args=[AWKWARD])


def test_a_conversation_with_spaces_and_slashes_in_its_id_opens_by_that_id(world, as_role):
    conversation = ingest_plan(world.acme, quiet_plan(), AWKWARD)
    response = as_role("support").get(conversation_url(AWKWARD))
    assert response.status_code == 200
    assert response.context["conversation"] == conversation
    run = Run.objects.get(conversation=conversation)
    # Its actions too: the greedy id never swallows the action that follows it.
    assert as_role("admin").get(f"{conversation_url(AWKWARD)}export?format=json").status_code == 200
    assert as_role("operator").get(f"/r/{quote_id(run.run_id)}/snapshots/").status_code == 200


def test_old_numeric_urls_redirect_to_the_id_urls(world, as_role):
    client = as_role("operator")
    response = client.get(f"/conversations/{world.deploy.pk}/?at=3")
    assert response.status_code == 301
    assert response["Location"] == "/c/conv-deploy/?at=3"
    run = Run.objects.filter(conversation=world.deploy).first()
    response = client.get(f"/runs/{run.pk}/snapshots/")
    assert response.status_code == 301
    assert response["Location"] == f"/r/{quote_id(run.run_id)}/snapshots/"


def test_an_old_numeric_url_of_another_tenant_answers_404(world, as_role):
    assert as_role("outsider").get(f"/conversations/{world.deploy.pk}/").status_code == 404


def test_a_run_url_opens_its_place_on_the_conversation_page(world, as_role):
    run = Run.objects.filter(conversation=world.deploy).first()
    response = as_role("support").get(run_url(run.run_id))
    assert response.status_code == 302
    assert response["Location"] == f"/c/conv-deploy/?steps={quote_plus(run.run_id)}#run-{run.pk}"
