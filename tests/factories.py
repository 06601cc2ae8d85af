"""Factories for tenant data: tests build rows through these, not by hand."""

import itertools

from django.contrib.auth import get_user_model

from sessions_app.models import Membership, Tenant

_counter = itertools.count(1)


def make_tenant(slug: str | None = None, name: str | None = None) -> Tenant:
    n = next(_counter)
    slug = slug or f"tenant-{n}"
    return Tenant.objects.create(slug=slug, name=name or slug.title())


def make_member(tenant: Tenant, role: str = "support", username: str | None = None, password: str = "pw-for-tests-1"):
    user_model = get_user_model()
    username = username or f"user{next(_counter)}"
    user, created = user_model.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save()
    Membership.objects.update_or_create(tenant=tenant, user=user, defaults={"role": role})
    return user
