"""The audit log: append one content-minimal event, read the tenant's events back.

An event holds the class, who did it, the conversation or run concerned; never message text, never a key,
never a pattern. Imports only the models and the vocabulary, so tenancy and the dashboard can record events
without reaching the gates or the audit service.
"""

from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from sessions_app.audit.inputs import AuditInputError
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import Conversation, Tenant
from sessions_app.models.audit import AuditEvent
from sessions_app.tenancy.scoping import scoped

EVENT_CLASSES: frozenset[str] = frozenset(EventClass)


def record_event(
    tenant: Tenant,
    event_class: str,
    *,
    actor: str = "",
    conversation_id: str = "",
    run_id: str = "",
    now: datetime | None = None,
    verdict: str = "",
    principal_hash: str = "",
    subject: str = "",
) -> AuditEvent:
    """Append an event that is not an audit finding: an export, a key created or revoked, a member changed, a
    wait resolved, a replay allowed or refused (with its verdict and the requested principal's keyed hash), a saved
    view created or deleted (`subject` names it by id, "saved_view:12")."""
    if event_class not in EVENT_CLASSES:
        raise AuditInputError(f"Unknown audit event class {event_class!r}.")
    return AuditEvent.objects.create(
        tenant=tenant,
        event_class=event_class,
        actor=actor[:200],
        conversation_id=conversation_id[:200],
        run_id=run_id[:200],
        observed_at=now or timezone.now(),
        verdict=verdict,
        principal_hash=principal_hash,
        subject=subject[:200],
    )


def list_audit_events(
    tenant: Tenant,
    *,
    event_classes: Iterable[str] = (),
    run_id: str = "",
    conversation_id: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
    before_id: int | None = None,
    limit: int = 50,
) -> list[AuditEvent]:
    """The tenant's audit events, newest first, narrowed by class, run, conversation and time (`since`
    inclusive, `until` exclusive).

    Paginate by passing the last row's id as `before_id`.
    """
    classes = list(event_classes)
    unknown = set(classes) - EVENT_CLASSES
    if unknown:
        raise AuditInputError(f"Unknown audit event class(es): {', '.join(sorted(unknown))}.")
    events: QuerySet[AuditEvent] = scoped(AuditEvent, tenant)
    if classes:
        events = events.filter(event_class__in=classes)
    if run_id:
        events = events.filter(run_id=run_id)
    if conversation_id:
        events = events.filter(conversation_id=conversation_id)
    if since is not None:
        events = events.filter(observed_at__gte=since)
    if until is not None:
        events = events.filter(observed_at__lt=until)
    if before_id is not None:
        events = events.filter(id__lt=before_id)
    return list(events.order_by("-observed_at", "-id")[: max(1, min(limit, 500))])


def record(
    tenant: Tenant,
    event_class: str,
    *,
    actor: AbstractBaseUser | None = None,
    conversation: Conversation | None = None,
    run_id: str = "",
) -> AuditEvent:
    """`record_event` from request objects (a user, a conversation), in the caller's transaction when there is one."""
    return record_event(
        tenant,
        event_class,
        actor=actor.get_username() if actor is not None else "",
        conversation_id=conversation.external_id if conversation is not None else "",
        run_id=run_id,
    )


def record_reveal(tenant: Tenant, conversation: Conversation, run_id: str, user: AbstractBaseUser) -> AuditEvent:
    return record(tenant, EventClass.CREDENTIAL_REVEALED, actor=user, conversation=conversation, run_id=run_id)
