"""Tenant admins manage members and roles, API keys (shown once, revocable), redaction and retention."""

import re

from django.test import Client

from sessions_app.models import ApiKey, Membership
from sessions_app.models.audit import AuditEvent
from tests.sessions_app.dashboard.conftest import SECRET


def test_the_last_admin_cannot_be_demoted_or_removed(world, as_role):
    admin = Membership.objects.get(tenant=world.acme, role="admin")
    client = as_role("admin")
    client.post(f"/settings/members/{admin.pk}/role", {"role": "support"})
    client.post(f"/settings/members/{admin.pk}/remove")
    admin.refresh_from_db()
    assert admin.role == "admin"


def test_a_removed_member_loses_access(world, as_role):
    member = Membership.objects.get(tenant=world.acme, user__username="sam")
    support = as_role("support")
    as_role("admin").post(f"/settings/members/{member.pk}/remove")
    assert support.get("/conversations/").status_code == 403


def test_a_new_api_key_is_shown_once_and_works_until_revoked(world, as_role):
    client = as_role("admin")
    posted = client.post("/settings/api-keys/", {"kind": "server", "label": "ci"})
    assert posted.status_code == 302  # post/redirect/get: a reload of the next page creates nothing
    response = client.get(posted["Location"])
    assert "no-store" in response["Cache-Control"]
    raw = re.search(r'<code class="secret-once" id="new-key">([^<]+)</code>', response.content.decode()).group(1)
    key = ApiKey.objects.get(tenant=world.acme, label="ci")
    assert raw not in client.get("/settings/api-keys/").content.decode()  # shown once
    assert ApiKey.objects.filter(tenant=world.acme, label="ci").count() == 1
    assert key.key_hash != raw and raw.startswith(key.prefix)
    api = Client()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    assert api.get("/api/v1/search?q=flag&scope=tenant", **auth).status_code == 200
    client.post(f"/settings/api-keys/{key.pk}/revoke")
    assert api.get("/api/v1/search?q=flag&scope=tenant", **auth).status_code == 401
    classes = list(AuditEvent.objects.filter(tenant=world.acme, actor="ada").values_list("event_class", flat=True))
    assert "key_created" in classes and "key_revoked" in classes


def test_a_tenant_redaction_pattern_masks_transcripts(world, as_role):
    client = as_role("admin")
    assert client.post("/settings/redaction/", {"patterns": r"QUOKKA-\d+"}).status_code == 302
    page = client.get(f"/c/{world.deploy.external_id}/").content.decode()
    assert "QUOKKA-5521" not in page
    assert SECRET not in page


def test_an_invalid_pattern_is_refused_and_changes_nothing(world, as_role):
    response = as_role("admin").post("/settings/redaction/", {"patterns": "ok\n(unclosed"})
    assert response.status_code == 400
    assert b"invalid" in response.content
    world.acme.refresh_from_db()
    assert world.acme.redaction_patterns == []


def test_retention_is_saved_and_applied_on_request(world, as_role):
    from django.utils import timezone

    from sessions_app.models import Conversation

    # last_activity_at is the last activity (the latest message's time); set both explicitly.
    Conversation.objects.filter(tenant=world.acme).update(last_activity_at=timezone.now())
    Conversation.objects.filter(pk=world.quiet.pk).update(last_activity_at="2020-01-01T00:00:00Z")
    client = as_role("admin")
    client.post("/settings/retention/", {"retention_days": "30"})
    world.acme.refresh_from_db()
    assert world.acme.retention_days == 30
    assert b"1 conversation would be deleted" in client.get("/settings/retention/").content
    client.post("/settings/retention/", {"retention_days": "30", "apply_now": "1"})
    assert list(Conversation.objects.filter(tenant=world.acme).values_list("external_id", flat=True)) == ["conv-deploy"]
    assert Conversation.objects.filter(tenant=world.globex).count() == 1
