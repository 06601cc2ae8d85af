"""Read-only share links for one conversation: off until a tenant admin turns them on, signed tokens
(django.core.signing) naming the link row, which decides expiry and revocation; every view is audited."""

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from input_errors import RejectedInput
from sessions_app.audit.events import record_event
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import Conversation, ReviewPolicy, ShareLink, Tenant
from sessions_app.tenancy.scoping import scoped

SALT = "sessiondesk.share-link"
MAX_DAYS = 90
REFUSED = "This share link is not valid: it may have expired or been revoked."


def policy(tenant: Tenant) -> ReviewPolicy:
    found = ReviewPolicy.objects.filter(tenant=tenant).first()
    return found if found is not None else ReviewPolicy(tenant=tenant)


def set_policy(tenant: Tenant, *, enabled: bool, days: int, actor: User) -> ReviewPolicy:
    if not 1 <= days <= MAX_DAYS:
        raise RejectedInput(f"A share link lasts 1 to {MAX_DAYS} days.")
    with transaction.atomic():
        row, _ = ReviewPolicy.objects.update_or_create(
            tenant=tenant, defaults={"share_links_enabled": enabled, "share_link_days": days}
        )
        if not enabled:
            # Turning the policy off closes every link still open.
            scoped(ShareLink, tenant).filter(revoked_at=None).update(revoked_at=timezone.now())
        record_event(tenant, EventClass.SHARE_POLICY_CHANGED, actor=actor.get_username())
    return row


def token_for(link: ShareLink) -> str:
    return signing.dumps({"l": link.pk, "t": link.tenant_id}, salt=SALT, compress=True)


def create_link(tenant: Tenant, conversation: Conversation, *, actor: User) -> tuple[ShareLink, str]:
    rules = policy(tenant)
    if not rules.share_links_enabled:
        raise RejectedInput("Share links are off for this tenant (an admin turns them on).", status=403)
    with transaction.atomic():
        link = ShareLink.objects.create(
            tenant=tenant,
            conversation=conversation,
            created_by=actor,
            expires_at=timezone.now() + timedelta(days=rules.share_link_days),
        )
        record_event(
            tenant, EventClass.SHARE_LINK_CREATED, actor=actor.get_username(), conversation_id=conversation.external_id
        )
    return link, token_for(link)


def revoke_link(tenant: Tenant, pk: int, *, actor: User) -> ShareLink:
    link = scoped(ShareLink, tenant).filter(pk=pk, conversation__tenant=tenant).select_related("conversation").first()
    if link is None:
        raise Http404("No such share link.")
    with transaction.atomic():
        if link.revoked_at is None:
            link.revoked_at = timezone.now()
            scoped(ShareLink, tenant).filter(pk=link.pk).update(revoked_at=link.revoked_at)
        record_event(
            tenant,
            EventClass.SHARE_LINK_REVOKED,
            actor=actor.get_username(),
            conversation_id=link.conversation.external_id,
        )
    return link


def links_of(tenant: Tenant, conversation: Conversation) -> list[ShareLink]:
    return list(scoped(ShareLink, tenant).filter(conversation=conversation).order_by("-created_at", "-pk"))


@dataclass(frozen=True)
class Opened:
    link: ShareLink
    conversation: Conversation


def open_link(token: str, *, viewer: str) -> Opened:
    """The conversation a valid token shares, the view audited; RejectedInput (404, one message for every reason:
    bad signature, unknown, revoked, expired, policy off) otherwise."""
    try:
        data = signing.loads(token, salt=SALT, max_age=timedelta(days=MAX_DAYS))
        link_pk, tenant_pk = int(data["l"]), int(data["t"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise RejectedInput(REFUSED, status=404) from None
    link = (
        ShareLink.objects.filter(pk=link_pk, tenant_id=tenant_pk, conversation__tenant_id=tenant_pk)
        .select_related("tenant", "conversation")
        .first()
    )
    now = timezone.now()
    if (
        link is None
        or link.revoked_at is not None
        or link.expires_at <= now
        or not policy(link.tenant).share_links_enabled
    ):
        raise RejectedInput(REFUSED, status=404)
    record_event(link.tenant, EventClass.SHARE_LINK_VIEWED, actor=viewer, conversation_id=link.conversation.external_id)
    return Opened(link, link.conversation)
