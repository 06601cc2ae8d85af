"""A member of tenant B who requests any URL of tenant A gets the same 404 as for something that does not exist."""

import re

from sessions_app.models import Membership
from tests.sessions_app.dashboard.pages import OBJECT_PAGES, request, tenant_pages


def _without_csrf(content: bytes) -> str:
    return re.sub(r'("X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[^"]+', r"\1", content.decode())


def test_every_object_url_of_another_tenant_answers_404(world, as_role):
    outsider = as_role("outsider")  # an admin of globex: the highest role, in the wrong tenant
    pages = [page for page in tenant_pages(world.acme, world.deploy) if page.name in OBJECT_PAGES]
    assert len(pages) == len(OBJECT_PAGES)
    for page in pages:
        response = request(outsider, page)
        assert response.status_code == 404, (page.name, response.status_code)


def test_the_404_for_another_tenant_is_the_404_for_nothing(world, as_role):
    outsider = as_role("outsider")
    foreign = outsider.get(f"/c/{world.deploy.external_id}/")
    missing = outsider.get("/c/no-such-conversation/")
    assert foreign.status_code == missing.status_code == 404
    # Identical but for the per-response CSRF token masking.
    assert _without_csrf(foreign.content) == _without_csrf(missing.content)


def test_cross_tenant_posts_change_nothing(world, as_role):
    outsider = as_role("outsider")
    member = Membership.objects.filter(tenant=world.acme, role="support").get()
    outsider.post(f"/settings/members/{member.pk}/role", {"role": "admin"})
    outsider.post(f"/settings/members/{member.pk}/remove")
    member.refresh_from_db()
    assert member.role == "support"


def test_lists_never_show_another_tenants_rows(world, as_role):
    page = as_role("outsider").get("/conversations/").content.decode()
    assert "conv-globex" in page
    assert "conv-deploy" not in page
    assert "conv-quiet" not in page
