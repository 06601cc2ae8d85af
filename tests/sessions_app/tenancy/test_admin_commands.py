"""create_tenant, create_api_key and add_member from the shell."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from sessions_app.models import ApiKey, Membership, Tenant
from sessions_app.tenancy.api_keys import authenticate

pytestmark = pytest.mark.django_db


def call(*args, stdin: str = "") -> str:
    import sys

    out = StringIO()
    old = sys.stdin
    sys.stdin = StringIO(stdin)
    try:
        call_command(*args, stdout=out, stderr=StringIO())
    finally:
        sys.stdin = old
    return out.getvalue()


def test_create_tenant_then_refuse_a_duplicate():
    call("create_tenant", "acme", "--name", "Acme Corp")
    assert Tenant.objects.get(slug="acme").name == "Acme Corp"
    with pytest.raises(CommandError, match="already exists"):
        call("create_tenant", "acme", "--name", "Again")


def test_create_tenant_rejects_a_bad_slug():
    with pytest.raises(CommandError, match="must be lowercase"):
        call("create_tenant", "Acme Corp", "--name", "x")
    assert not Tenant.objects.exists()


def test_create_api_key_prints_the_key_once_and_stores_only_its_hash(tenant):
    raw = call("create_api_key", "--tenant", "acme", "--kind", "client").strip()
    key = ApiKey.objects.get()
    assert key.kind == "client" and raw not in key.key_hash and key.prefix == raw[:10]
    assert authenticate(raw) == key


def test_add_member_creates_the_user_with_a_password_from_stdin(tenant):
    call("add_member", "--tenant", "acme", "--user", "sam", "--role", "operator", "--password-stdin",
         stdin="correct horse battery\n")
    user = get_user_model().objects.get(username="sam")
    assert user.check_password("correct horse battery")
    assert Membership.objects.get(user=user, tenant=tenant).role == "operator"


def test_add_member_changes_the_role_of_an_existing_member(tenant):
    call("add_member", "--tenant", "acme", "--user", "sam", "--role", "support", "--password-stdin",
         stdin="correct horse battery\n")
    call("add_member", "--tenant", "acme", "--user", "sam", "--role", "admin")
    assert Membership.objects.get().role == "admin"


def test_add_member_rejects_a_weak_password_and_creates_nobody(tenant):
    with pytest.raises(CommandError, match="Password rejected"):
        call("add_member", "--tenant", "acme", "--user", "sam", "--role", "support", "--password-stdin",
             stdin="123\n")
    assert not get_user_model().objects.exists()


def test_key_and_member_changes_from_the_shell_are_audited(tenant):
    from sessions_app.models import AuditEvent
    from sessions_app.tenancy.api_keys import revoke_api_key

    call("create_api_key", "--tenant", "acme", "--kind", "server")
    revoke_api_key(ApiKey.objects.get(), actor="ops")
    call("add_member", "--tenant", "acme", "--user", "sam", "--role", "support", "--password-stdin",
         stdin="correct horse battery\n")
    events = list(AuditEvent.objects.filter(tenant=tenant).order_by("id").values_list("event_class", "actor"))
    assert events == [
        ("key_created", "manage.py create_api_key"),
        ("key_revoked", "ops"),
        ("member_changed", "manage.py add_member"),
    ]
