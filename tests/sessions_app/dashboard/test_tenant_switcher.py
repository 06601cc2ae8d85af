"""A person in several tenants switches between them; the current tenant decides everything they see."""

from sessions_app.models import Membership


def test_a_member_of_two_tenants_switches_and_sees_the_other_tenants_conversations(world, as_role):
    Membership.objects.create(tenant=world.globex, user=world.users["operator"], role="support")
    client = as_role("operator")
    page = client.get("/conversations/").content.decode()
    assert "conv-deploy" in page and "conv-globex" not in page
    assert 'name="tenant"' in page  # the switcher shows for people in several tenants
    response = client.post("/tenant/switch", {"tenant": "globex"})
    assert response.status_code == 302
    page = client.get("/conversations/").content.decode()
    assert "conv-globex" in page and "conv-deploy" not in page


def test_the_role_follows_the_current_tenant(world, as_role):
    Membership.objects.create(tenant=world.globex, user=world.users["operator"], role="support")
    client = as_role("operator")
    assert client.get("/repairs/").status_code == 200
    client.post("/tenant/switch", {"tenant": "globex"})
    assert client.get("/repairs/").status_code == 403


def test_switching_to_a_tenant_one_does_not_belong_to_changes_nothing(world, as_role):
    client = as_role("support")
    client.post("/tenant/switch", {"tenant": "globex"})
    page = client.get("/conversations/").content.decode()
    assert "conv-deploy" in page and "conv-globex" not in page


def test_switching_refuses_get(world, as_role):
    assert as_role("support").get("/tenant/switch?tenant=globex").status_code == 405
