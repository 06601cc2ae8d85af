"""Read-only share links for one conversation: off by default, an admin's, opened with no session (masked, no
reveal), every view audited, refused after revocation, after expiry and once the policy is off."""

from datetime import timedelta

from django.test import Client
from django.utils import timezone

from sessions_app.models import AuditEvent, ShareLink
from sessions_app.review import share_links
from tests.sessions_app.dashboard.conftest import SECRET

REFUSED = b"This share link is not valid"


def _enable(world, as_role):
    assert as_role("admin").post("/settings/sharing/", {"enabled": "1", "days": "3"}).status_code == 302


def _create(as_role) -> str:
    response = as_role("admin").post("/c/conv-deploy/share")
    assert response.status_code == 200
    url = response.context["url"]
    return url[url.index("/s/") :]


def test_share_links_are_off_until_an_admin_turns_them_on(world, as_role):
    assert as_role("admin").post("/c/conv-deploy/share").status_code == 403
    assert not ShareLink.objects.exists()
    assert as_role("operator").post("/settings/sharing/", {"enabled": "1", "days": "3"}).status_code == 403
    assert as_role("admin").post("/settings/sharing/", {"enabled": "1", "days": "0"}).status_code == 400
    not_a_number = as_role("admin").post("/settings/sharing/", {"enabled": "1", "days": "seven"})
    assert not_a_number.status_code == 400 and "whole number" in not_a_number.content.decode()
    assert not share_links.policy(world.acme).share_links_enabled


def test_a_share_link_opens_one_conversation_read_only_without_a_session(world, as_role):
    _enable(world, as_role)
    path = _create(as_role)
    anonymous = Client()
    response = anonymous.get(path)
    body = response.content.decode()
    assert response.status_code == 200
    assert "conv-deploy" in body and "Roll out checkout_v3_enabled" in body
    assert SECRET not in body  # redaction applied
    assert "reveal" not in body.lower() and "csrfmiddlewaretoken" not in body  # no reveal, no forms
    assert "no-store" in response["Cache-Control"]
    anonymous.get(path)
    views = AuditEvent.objects.filter(tenant=world.acme, event_class="share_link_viewed")
    assert views.count() == 2 and {e.conversation_id for e in views} == {"conv-deploy"}
    # The link opens nothing else: the dashboard still sends the holder to the login.
    assert anonymous.get("/c/conv-quiet/")["Location"].startswith("/login")


def test_a_revoked_link_is_refused(world, as_role):
    _enable(world, as_role)
    path = _create(as_role)
    link = ShareLink.objects.get()
    assert as_role("admin").post(f"/share-links/{link.pk}/revoke").status_code == 302
    response = Client().get(path)
    assert response.status_code == 404 and REFUSED in response.content
    assert not AuditEvent.objects.filter(event_class="share_link_viewed").exists()


def test_an_expired_link_is_refused(world, as_role):
    _enable(world, as_role)
    path = _create(as_role)
    ShareLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = Client().get(path)
    assert response.status_code == 404 and REFUSED in response.content


def test_turning_the_policy_off_closes_every_open_link(world, as_role):
    _enable(world, as_role)
    path = _create(as_role)
    as_role("admin").post("/settings/sharing/", {"days": "3"})
    assert Client().get(path).status_code == 404
    assert ShareLink.objects.get().revoked_at is not None


def test_a_tampered_or_foreign_token_is_refused_like_a_missing_one(world, as_role):
    _enable(world, as_role)
    path = _create(as_role)
    token = path.removeprefix("/s/").removesuffix("/")
    for forged in (token[:-2] + "xx", "no-such-token", token.replace(":", ";", 1)):
        response = Client().get(f"/s/{forged}/")
        assert response.status_code == 404 and REFUSED in response.content


def test_outsiders_cannot_revoke_or_create_another_tenant_s_links(world, as_role):
    _enable(world, as_role)
    _create(as_role)
    link = ShareLink.objects.get()
    assert as_role("outsider").post(f"/share-links/{link.pk}/revoke").status_code == 404
    assert as_role("outsider").post("/c/conv-deploy/share").status_code == 404
    link.refresh_from_db()
    assert link.revoked_at is None and ShareLink.objects.count() == 1
