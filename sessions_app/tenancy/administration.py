"""Tenant administration use cases: members and roles, redaction patterns, retention, negotiated prices and the
STUCK threshold. Each one is audited."""

import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from masking import compile_rules
from search_app import index as search_index
from sessions_app.audit.events import record
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import Invitation, Membership, Role, Tenant
from sessions_app.tenancy.api_keys import hash_key
from sessions_app.tenancy.permissions import ROLE_RANK
from sessions_app.tenancy.tenant_locks import TenantLock, lock_tenants
from sessions_app.transcripts.prices import parse_overrides


class AdminError(ValueError):
    """A change we refuse, with a message that says why."""


def _refuse_losing_the_last_admin(membership: Membership, keeps_admin: bool) -> None:
    """Inside the change's transaction: take the tenant's MEMBERS lock and refuse a change that would leave no
    admin. Two admins demoting each other at once take turns on the lock, and the second reads the admins after the
    first committed, so one of them is refused instead of both going through. (A lock per tenant, not row locks on
    the memberships: on Citus the membership table is a reference table, where a row lock stalls every tenant.)"""
    lock_tenants(TenantLock.MEMBERS, [membership.tenant_id])
    admins = list(
        Membership.objects.filter(tenant_id=membership.tenant_id, role=Role.ADMIN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not keeps_admin and admins == [membership.pk]:
        raise AdminError("A tenant needs at least one admin; make someone else admin first.")


def _current(membership: Membership) -> Membership:
    """The membership as it is now (another admin may have changed or removed it since the page was read)."""
    try:
        return Membership.objects.select_related("user", "tenant").get(pk=membership.pk)
    except Membership.DoesNotExist:
        raise AdminError("That member is no longer in this tenant.") from None


INVITATION_DAYS = 7


class InvitationUnusable(AdminError):
    """The link is unknown, used, revoked or expired: one answer for all, so a link tells nothing else."""


def create_invitation(tenant: Tenant, role: str, note: str = "", *, actor: User) -> tuple[Invitation, str]:
    """A one-time link to join `tenant` as `role`; the raw token is returned once and only its hash is stored.

    The admin names nobody: the invitee picks a username or signs in to an account they have, so no account
    outside the tenant is ever looked up, pulled in or told apart."""
    if role not in Role.values:
        raise AdminError(f"Unknown role {role!r}; use one of {', '.join(Role.values)}.")
    raw = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation.objects.create(
            tenant=tenant,
            role=role,
            note=note.strip(),
            token_hash=hash_key(raw),
            created_by=actor,
            expires_at=timezone.now() + timedelta(days=INVITATION_DAYS),
        )
        record(tenant, EventClass.MEMBER_CHANGED, actor=actor)
    return invitation, raw


def open_invitation(raw_token: str) -> Invitation:
    """The invitation a link stands for while it can still be accepted."""
    invitation = (
        Invitation.objects.select_related("tenant")
        .filter(token_hash=hash_key(raw_token), accepted_at=None, revoked_at=None, expires_at__gt=timezone.now())
        .first()
    )
    if invitation is None:
        raise InvitationUnusable("This invitation link is not valid: it was used, withdrawn or it expired.")
    return invitation


def accept_invitation(raw_token: str, user: User) -> Membership:
    """`user` joins the invitation's tenant; the link is spent. Someone already a member keeps the higher role.
    The link names the tenant; its MEMBERS lock, taken before the link is read again, makes two concurrent
    acceptances of one link end with one member and one refusal."""
    with transaction.atomic():
        lock_tenants(TenantLock.MEMBERS, [open_invitation(raw_token).tenant_id])
        invitation = open_invitation(raw_token)
        membership, created = Membership.objects.get_or_create(
            tenant=invitation.tenant, user=user, defaults={"role": invitation.role}
        )
        if not created and ROLE_RANK[invitation.role] > ROLE_RANK[membership.role]:
            membership.role = invitation.role
            membership.save(update_fields=["role"])
        invitation.accepted_at = timezone.now()
        invitation.accepted_by = user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
        record(invitation.tenant, EventClass.MEMBER_CHANGED, actor=user)
    return membership


def withdraw_invitation(invitation: Invitation, *, actor: User) -> bool:
    """Revoke a link still open; False when it was already accepted or withdrawn. Under the tenant's MEMBERS lock,
    as an acceptance is, and only while the row is still open: a withdrawal racing an acceptance of the same link
    waits for it, then leaves the spent link as it is (never accepted and revoked at once)."""
    with transaction.atomic():
        lock_tenants(TenantLock.MEMBERS, [invitation.tenant_id])
        still_open = Invitation.objects.filter(
            tenant_id=invitation.tenant_id, pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True
        )
        withdrawn = bool(still_open.update(revoked_at=timezone.now()))
        if withdrawn:
            record(invitation.tenant, EventClass.MEMBER_CHANGED, actor=actor)
    return withdrawn


def change_role(membership: Membership, role: str, *, actor: User) -> Membership:
    if role not in Role.values:
        raise AdminError(f"Unknown role {role!r}; use one of {', '.join(Role.values)}.")
    with transaction.atomic():
        _refuse_losing_the_last_admin(membership, keeps_admin=role == Role.ADMIN)
        membership = _current(membership)
        membership.role = role
        membership.save(update_fields=["role"])
        record(membership.tenant, EventClass.MEMBER_CHANGED, actor=actor)
    return membership


def remove_member(membership: Membership, *, actor: User) -> None:
    with transaction.atomic():
        _refuse_losing_the_last_admin(membership, keeps_admin=False)
        _current(membership).delete()
        record(membership.tenant, EventClass.MEMBER_CHANGED, actor=actor)


def set_redaction_patterns(tenant: Tenant, patterns: list[str], *, actor: User) -> None:
    """Save the patterns; the tenant's search index is rebuilt under them in the background, and until then its
    conversations are out of search (masked means unsearchable, also for text indexed before the change)."""
    try:
        compile_rules(patterns)
    except ValueError as error:
        raise AdminError(str(error)) from None
    with transaction.atomic():
        # The tenant's REDACTION lock first, exclusively: the change waits for index writers that masked with the old
        # patterns (search_app.index holds it shared), and two saves at once run one after the other, the second
        # comparing with what the first wrote (no lost update, no two rebuild markings interleaving on the same rows).
        lock_tenants(TenantLock.REDACTION, [tenant.pk])
        before = Tenant.objects.filter(pk=tenant.pk).values_list("redaction_patterns", flat=True).first() or []
        tenant.redaction_patterns = patterns
        tenant.save(update_fields=["redaction_patterns"])
        if patterns != before:
            search_index.tenant_patterns_changed(tenant.id)
        # The patterns may describe secrets' shapes: the event records that they changed, not what they are.
        record(tenant, EventClass.REDACTION_CHANGED, actor=actor)


def set_costs(
    tenant: Tenant, stuck_after_hours: int, price_overrides: dict[str, dict[str, str]], *, actor: User
) -> None:
    """Save the negotiated prices and the STUCK threshold in one transaction, one audit event per setting that
    changed (the prices are the tenant's own contract terms: the event says they changed, the page shows them)."""
    parse_overrides(price_overrides)  # what saves is what ingest can read: a bad price refuses the whole save
    with transaction.atomic():
        # Two saves at once, or a save and a reprice, take turns; each reads what the one before it wrote.
        lock_tenants(TenantLock.SETTINGS, [tenant.pk])
        before = Tenant.objects.filter(pk=tenant.pk).values("price_overrides", "stuck_after_hours").get()
        tenant.price_overrides = price_overrides
        tenant.stuck_after_hours = stuck_after_hours
        tenant.save(update_fields=["price_overrides", "stuck_after_hours"])
        if before["price_overrides"] != price_overrides:
            record(tenant, EventClass.PRICES_CHANGED, actor=actor)
        if before["stuck_after_hours"] != stuck_after_hours:
            record(tenant, EventClass.STUCK_AFTER_CHANGED, actor=actor)


def set_retention(tenant: Tenant, days: int | None, *, actor: User) -> None:
    with transaction.atomic():
        tenant.retention_days = days
        tenant.save(update_fields=["retention_days"])
        record(tenant, EventClass.RETENTION_CHANGED, actor=actor)
