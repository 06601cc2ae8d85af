"""A link into another tenant: its members are offered a switch; anyone else gets the site's 404 page, also with
DEBUG on (never Django's technical page, which would name the URL patterns)."""

import pytest
from django.test import override_settings

from sessions_app.models import Membership, Run


@pytest.fixture
def both(world):
    Membership.objects.create(tenant=world.globex, user=world.users["support"], role="support")
    return world


def test_a_member_of_both_tenants_is_offered_a_switch_for_a_conversation_and_a_run(both, as_role):
    client = as_role("support")
    response = client.get(f"/c/{both.foreign.external_id}/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "Switch to Globex and open it" in page
    assert f'name="next" value="/c/{both.foreign.external_id}/"' in page
    run = Run.objects.filter(conversation=both.foreign).first()
    assert "Switch to Globex" in client.get(f"/r/{run.run_id}/").content.decode()
    switched = client.post("/tenant/switch", {"tenant": "globex", "next": f"/c/{both.foreign.external_id}/"})
    assert switched["Location"] == f"/c/{both.foreign.external_id}/"
    assert client.get(switched["Location"]).status_code == 200


@override_settings(DEBUG=True)
def test_a_non_member_gets_the_sites_404_page_even_with_debug_on(world, as_role):
    response = as_role("support").get(f"/c/{world.foreign.external_id}/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Not found</h1>" in page
    assert "Switch to" not in page
    assert "URLconf" not in page  # not the technical 404
