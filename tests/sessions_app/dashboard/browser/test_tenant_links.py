"""Deep links across login and tenants: the #anchor survives login; a member of both tenants is offered a switch;
anyone else gets the site's 404 page."""

import pytest

from sessions_app.models import Membership

pytestmark = pytest.mark.browser


def test_the_anchor_of_a_deep_link_survives_login(live_world, page, live_server):
    from tests.sessions_app.dashboard.conftest import PASSWORD

    page.goto(f"{live_server.url}/c/{live_world.deploy.external_id}/#m-3")
    page.wait_for_url("**/login?next=**")
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/c/{live_world.deploy.external_id}/#m-3")
    assert page.console_errors == []


def test_a_member_of_both_tenants_is_offered_a_switch_and_others_get_the_404_page(live_world, login, page, live_server):
    Membership.objects.create(tenant=live_world.globex, user=live_world.users["support"], role="support")
    login("sam")  # working in Acme (first by name)
    page.goto(f"{live_server.url}/c/{live_world.foreign.external_id}/")
    page.get_by_role("button", name="Switch to Globex and open it").click()
    page.wait_for_url(f"{live_server.url}/c/{live_world.foreign.external_id}/")
    assert page.get_by_role("heading", name="Transcript").count() == 1

    page.context.clear_cookies()
    login("olga")  # Acme only
    response = page.goto(f"{live_server.url}/c/{live_world.foreign.external_id}/")
    assert response.status == 404
    assert "Switch to" not in page.content()
    assert page.get_by_role("heading", name="Not found").count() == 1
    assert page.locator("link[rel=stylesheet]").count() >= 1  # the site's page, not a bare debug page
