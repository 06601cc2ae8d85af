"""Principals at the edge: the end user or authorization an application loaded a history for.

A principal arrives as an opaque string and is kept only as a keyed hash (HMAC-SHA256 with a key derived from
settings.SECRET_KEY, per tenant), so the store can tell principals apart without holding them. The first
principal a conversation's snapshots name owns the conversation; the pure gate 5 compares hashes.
"""

from django.utils.crypto import salted_hmac

from sessions_app.models import Conversation

KEY_SALT = "sessiondesk.audit.principal"


def principal_hash(tenant_id: int, principal: str) -> str:
    """The keyed hash stored for `principal` in tenant `tenant_id` ("" for no principal)."""
    if not principal:
        return ""
    return salted_hmac(KEY_SALT, f"{tenant_id}:{principal}", algorithm="sha256").hexdigest()


def claim_conversation(conversation: Conversation, hashed: str) -> None:
    """Make `hashed` the conversation's owner unless it already has one (the first principal wins, also
    against a concurrent writer: the update only applies while the owner is still empty)."""
    if not hashed or conversation.owner_principal_hash:
        return
    updated = Conversation.objects.filter(pk=conversation.pk, owner_principal_hash="").update(
        owner_principal_hash=hashed
    )
    if updated:
        conversation.owner_principal_hash = hashed
    else:
        conversation.owner_principal_hash = (
            Conversation.objects.filter(pk=conversation.pk).values_list("owner_principal_hash", flat=True).get()
        )
