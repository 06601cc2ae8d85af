"""Audit events the dashboard itself causes: a credential reveal, an export, a member or settings change.

A thin adapter from request objects (a user, a conversation) to the audit's `record_event`, which writes the
append-only, content-minimal row: the class, who did it, the conversation or run concerned; never message text,
never a key, never a pattern.
"""

from sessions_app.audit import gates
from sessions_app.audit.service import record_event
from sessions_app.models import Conversation, Tenant
from sessions_app.models.audit import AuditEvent

EXPORT = gates.EXPORT
MEMBER_CHANGED = gates.MEMBER_CHANGED
CREDENTIAL_REVEALED = gates.CREDENTIAL_REVEALED
REDACTION_CHANGED = gates.REDACTION_CHANGED
RETENTION_CHANGED = gates.RETENTION_CHANGED


def record(
    tenant: Tenant,
    event_class: str,
    *,
    actor=None,
    conversation: Conversation | None = None,
    run_id: str = "",
) -> AuditEvent:
    """Append one audit event (in the caller's transaction when there is one)."""
    return record_event(
        tenant,
        event_class,
        actor=actor.get_username() if actor is not None else "",
        conversation_id=conversation.external_id if conversation is not None else "",
        run_id=run_id,
    )


def record_reveal(tenant: Tenant, conversation: Conversation, run_id: str, user) -> AuditEvent:
    return record(tenant, CREDENTIAL_REVEALED, actor=user, conversation=conversation, run_id=run_id)
