"""Pasting a conversation or run id into search or the list filter goes straight to it."""

import pytest

from sessions_app.models import Run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/search/?q=", "/conversations/?q="])
def test_a_pasted_conversation_id_goes_to_the_conversation(as_role, url):
    response = as_role("support").get(url + "%20conv-deploy%20")
    assert response.status_code == 302
    assert response["Location"] == "/c/conv-deploy/"


@pytest.mark.parametrize("url", ["/search/?q=", "/conversations/?q="])
def test_a_pasted_run_id_goes_to_the_run(world, as_role, url):
    run = Run.objects.filter(conversation=world.deploy).first()
    response = as_role("support").get(url + run.run_id, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/r/{run.run_id}/"


def test_another_tenants_id_is_just_text(as_role):
    response = as_role("support").get("/search/?q=conv-globex")
    assert response.status_code == 200
