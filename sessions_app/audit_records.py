"""Audit events the dashboard itself causes: a credential reveal, an export, a member, key or settings change.

Written through the audit's `record_event` into its append-only, content-minimal log: the class, who did it,
and the conversation or run concerned; never message text, never a key, never a pattern.
"""

from django.utils import timezone

from sessions_app.audit import gates
from sessions_app.audit.service import record_event
from sessions_app.models import Conversation, Tenant
from sessions_app.models.audit import AuditEvent

EXPORT = gates.EXPORT
KEY_CREATED = gates.KEY_CREATED
KEY_REVOKED = gates.KEY_REVOKED
MEMBER_CHANGED = gates.MEMBER_CHANGED
# Dashboard actions the audit's EVENT_CLASSES does not name yet (asked for in sessions_app.audit.gates).
CREDENTIAL_REVEALED = getattr(gates, "CREDENTIAL_REVEALED", "credential_revealed")
REDACTION_CHANGED = getattr(gates, "REDACTION_CHANGED", "redaction_changed")
RETENTION_CHANGED = getattr(gates, "RETENTION_CHANGED", "retention_changed")


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
    fields = {
        "actor": _actor_name(actor)[:200],
        "conversation_id": conversation.external_id[:200] if conversation is not None else "",
        "run_id": run_id[:200],
    }
    if event_class in gates.EVENT_CLASSES:
        return record_event(tenant, event_class, **fields)
    # Not (yet) a class record_event accepts: the same append-only row, written directly.
    return AuditEvent.objects.create(tenant=tenant, event_class=event_class, observed_at=timezone.now(), **fields)


def record_reveal(tenant: Tenant, conversation: Conversation, run_id: str, user) -> AuditEvent:
    return record(tenant, CREDENTIAL_REVEALED, actor=user, conversation=conversation, run_id=run_id)
