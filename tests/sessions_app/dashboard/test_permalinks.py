"""Copyable links for a conversation, run, message or search survive the login and switch the reader's tenant."""

from urllib.parse import unquote

from django.test import Client

from sessions_app.models import Membership
from sessions_app.tenancy.permissions import SESSION_TENANT_KEY
from tests.sessions_app.dashboard.conftest import PASSWORD, client_for


def test_the_conversation_page_offers_its_permalink(world, as_role):
    page = as_role("support").get("/c/conv-deploy/").content.decode()
    assert "/l/acme/c/conv-deploy/" in page


def test_a_permalink_survives_the_login(world):
    client = Client()
    response = client.get("/l/acme/c/conv-deploy/?at=2")
    assert response.status_code == 302
    assert unquote(response["Location"]) == "/login?next=/l/acme/c/conv-deploy/?at=2"
    login = client.post(response["Location"], {"username": "sam", "password": PASSWORD})
    assert unquote(login["Location"]) == "/l/acme/c/conv-deploy/?at=2"
    opened = client.get(login["Location"], follow=True)
    assert opened.status_code == 200 and opened.redirect_chain[-1][0] == "/c/conv-deploy/?at=2"


def test_a_permalink_switches_to_its_tenant(world):
    sam = world.users["support"]
    Membership.objects.create(tenant=world.globex, user=sam, role="support")
    client = client_for(sam)
    session = client.session
    session[SESSION_TENANT_KEY] = world.globex.pk
    session.save()
    for path in ("/l/acme/c/conv-deploy/", "/l/acme/search/?q=flag", "/l/acme/c/conv-deploy/?at=1"):
        response = client.get(path, follow=True)
        assert response.status_code == 200, path
        assert client.session[SESSION_TENANT_KEY] == world.acme.pk


def test_a_permalink_into_a_tenant_one_is_not_in_switches_nothing_and_answers_404(world, as_role):
    client = as_role("outsider")
    response = client.get("/l/acme/c/conv-deploy/", follow=True)
    assert response.status_code == 404
    assert client.session[SESSION_TENANT_KEY] == world.globex.pk


def test_a_permalink_opens_only_dashboard_pages(world, as_role):
    for path in ("/l/acme//evil.example/", "/l/acme/settings/members/", "/l/acme/logout"):
        assert as_role("support").get(path).status_code == 404, path
