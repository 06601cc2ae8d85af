"""Audit events the dashboard itself causes: a credential reveal, an export, a member, key or settings change.

Rows go into the audit issue's append-only AuditEvent log, content-minimal: the class, who did it, and the
conversation or run it concerns; never message text, never a key, never a pattern.
"""

from django.utils import timezone

from sessions_app.models import Conversation, Tenant
from sessions_app.models.audit import AuditEvent, EventClass

# Dashboard actions the audit log's EventClass does not name (yet); stored as these plain class strings.
CREDENTIAL_REVEALED = "credential_revealed"
REDACTION_CHANGED = "redaction_changed"
RETENTION_CHANGED = "retention_changed"
RETENTION_APPLIED = "retention_applied"

EXPORT = EventClass.EXPORT
KEY_CREATED = EventClass.KEY_CREATED
KEY_REVOKED = EventClass.KEY_REVOKED
MEMBER_CHANGED = EventClass.MEMBER_CHANGED


def _actor_name(actor) -> str:
    if actor is None:
        return ""
    return actor.get_username() if hasattr(actor, "get_username") else str(actor)


def record(
    tenant: Tenant,
    event_class: str,
    *,
    actor=None,
    conversation: Conversation | None = None,
    run_id: str = "",
) -> AuditEvent:
    """Append one audit event (in the caller's transaction when there is one)."""
    return AuditEvent.objects.create(
        tenant=tenant,
        event_class=str(event_class),
        conversation_id=conversation.external_id if conversation is not None else "",
        run_id=run_id,
        observed_at=timezone.now(),
        actor=_actor_name(actor),
    )


def record_reveal(tenant: Tenant, conversation: Conversation, run_id: str, user) -> AuditEvent:
    return record(tenant, CREDENTIAL_REVEALED, actor=user, conversation=conversation, run_id=run_id)
