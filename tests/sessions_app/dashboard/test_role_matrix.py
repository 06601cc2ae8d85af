"""Each role reaches exactly the pages SPEC section 4 gives it: support < operator < admin."""

import pytest

from sessions_app.tenancy.permissions import MINIMUM_ROLE, Action, Grants, role_allows
from tests.sessions_app.dashboard.pages import RANK, request, tenant_pages


@pytest.mark.parametrize("role", ["support", "operator", "admin"])
def test_each_role_gets_its_pages_and_403_for_the_rest(world, as_role, role):
    client = as_role(role)
    for page in tenant_pages(world.acme, world.deploy):
        response = request(client, page)
        allowed = RANK[role] >= RANK[page.role]
        if allowed:
            assert response.status_code in (200, 301, 302), (page.name, response.status_code)
        else:
            assert response.status_code == 403, (page.name, role, response.status_code)


def test_support_reads_and_searches_but_nothing_more():
    assert role_allows("support", Action.READ_CONVERSATIONS)
    assert role_allows("support", Action.SEARCH)
    assert not role_allows("support", Action.VIEW_AUDIT)
    assert not role_allows("support", Action.EXPORT)


def test_operator_audits_but_does_not_export_or_administer():
    assert role_allows("operator", Action.VIEW_REPAIRS)
    assert role_allows("operator", Action.ADD_RECEIPTS)
    assert not role_allows("operator", Action.EXPORT)
    assert not role_allows("operator", Action.MANAGE_API_KEYS)
    assert not role_allows("operator", Action.REVEAL_CREDENTIALS)


def test_admin_may_do_everything_and_an_unknown_role_nothing():
    assert all(role_allows("admin", action) for action in Action)
    assert not any(role_allows("intern", action) for action in Action)


def test_every_action_names_a_minimum_role_and_grants_mirror_it():
    assert set(MINIMUM_ROLE) == set(Action)
    grants = Grants("operator")
    assert grants.view_audit is True
    assert grants.export is False
    assert Action.SEARCH in grants


def test_the_navigation_shows_only_what_the_role_may_open(world, as_role):
    support_page = as_role("support").get("/conversations/").content.decode()
    admin_page = as_role("admin").get("/conversations/").content.decode()
    assert 'href="/repairs/"' not in support_page
    assert 'href="/settings/members/"' not in support_page
    assert 'href="/repairs/"' in admin_page
    assert 'href="/settings/members/"' in admin_page
