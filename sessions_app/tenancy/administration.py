"""Tenant administration use cases: members and roles, redaction patterns, retention. Each one is audited."""

from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.db import IntegrityError, transaction
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from search_app import index as search_index
from search_app import redaction
from sessions_app.audit import records as audit_records
from sessions_app.audit.records import record
from sessions_app.models import Membership, Role, Tenant


class AdminError(ValueError):
    """A change we refuse, with a message that says why."""


def _admin_count(tenant: Tenant) -> int:
    return Membership.objects.filter(tenant=tenant, role=Role.ADMIN).count()


NOT_BY_NAME = (
    "People join a tenant by accepting an invitation; an admin cannot add an account by its name. Until "
    "invitations are available, the server operator adds members: python manage.py add_member --tenant {slug} "
    "--user NAME --role {role}."
)


def add_member(tenant: Tenant, username: str, role: str, *, actor) -> Membership:
    """The dashboard's add-by-name path: it never looks at users outside this tenant.

    Whether a name belongs to someone elsewhere (or to nobody) cannot change the answer, so it can neither pull
    another tenant's user in nor enumerate usernames; only this tenant's own members are looked up.
    """
    if role not in Role.values:
        raise AdminError(f"Unknown role {role!r}; use one of {', '.join(Role.values)}.")
    existing = Membership.objects.filter(tenant=tenant, user__username=username.strip()).first()
    if existing is not None:
        raise AdminError(f"{username.strip()} is already a member ({existing.role}).")
    raise AdminError(NOT_BY_NAME.format(slug=tenant.slug, role=role))


def invite_member(tenant: Tenant, username: str, role: str, *, actor) -> Membership:
    """A new account, member of `tenant` with `role`, with no usable password until the invite link sets one.

    Nobody outside the tenant is looked up: a name already taken anywhere is refused by the unique constraint (an
    existing account joins a tenant through `manage.py add_member`)."""
    if role not in Role.values:
        raise AdminError(f"Unknown role {role!r}; use one of {', '.join(Role.values)}.")
    name = username.strip()
    try:
        with transaction.atomic():
            user = get_user_model()(username=name)
            user.set_unusable_password()
            user.save()
            membership = Membership.objects.create(tenant=tenant, user=user, role=role)
            record(tenant, audit_records.MEMBER_CHANGED, actor=actor)
    except IntegrityError:
        raise AdminError(f"The name {name!r} cannot be used; choose another.") from None
    return membership


def invite_path(user) -> str:
    """The one-time set-password link (Django's password-reset token: it stops working once a password is set,
    and after PASSWORD_RESET_TIMEOUT)."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return f"/invite/{uid}/{default_token_generator.make_token(user)}/"


def change_role(membership: Membership, role: str, *, actor) -> Membership:
    if role not in Role.values:
        raise AdminError(f"Unknown role {role!r}; use one of {', '.join(Role.values)}.")
    with transaction.atomic():
        if membership.role == Role.ADMIN and role != Role.ADMIN and _admin_count(membership.tenant) <= 1:
            raise AdminError("A tenant needs at least one admin; make someone else admin first.")
        membership.role = role
        membership.save(update_fields=["role"])
        record(membership.tenant, audit_records.MEMBER_CHANGED, actor=actor)
    return membership


def remove_member(membership: Membership, *, actor) -> None:
    with transaction.atomic():
        if membership.role == Role.ADMIN and _admin_count(membership.tenant) <= 1:
            raise AdminError("A tenant needs at least one admin; make someone else admin first.")
        membership.delete()
        record(membership.tenant, audit_records.MEMBER_CHANGED, actor=actor)


def set_redaction_patterns(tenant: Tenant, patterns: list[str], *, actor) -> None:
    """Save the patterns; the tenant's search index is rebuilt under them in the background, and until then its
    conversations are out of search (masked means unsearchable, also for text indexed before the change)."""
    try:
        redaction.compile_rules(patterns)
    except ValueError as error:
        raise AdminError(str(error)) from None
    with transaction.atomic():
        before = Tenant.objects.filter(pk=tenant.pk).values_list("redaction_patterns", flat=True).first() or []
        tenant.redaction_patterns = patterns
        tenant.save(update_fields=["redaction_patterns"])
        if patterns != before:
            search_index.tenant_patterns_changed(tenant.id)
        # The patterns may describe secrets' shapes: the event records that they changed, not what they are.
        record(tenant, audit_records.REDACTION_CHANGED, actor=actor)


def set_retention(tenant: Tenant, days: int | None, *, actor) -> None:
    with transaction.atomic():
        tenant.retention_days = days
        tenant.save(update_fields=["retention_days"])
        record(tenant, audit_records.RETENTION_CHANGED, actor=actor)
