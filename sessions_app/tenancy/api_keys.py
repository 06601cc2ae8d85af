"""API keys: random secrets shown once, stored only as a hash."""

import hashlib
import secrets
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

from input_errors import RejectedInput
from sessions_app.audit.events import record_event
from sessions_app.audit.vocabulary import EventClass
from sessions_app.models import ApiKey, Conversation, Snapshot, Source, Tenant
from sessions_app.tenancy.scoping import scoped

KEY_PREFIX = "sdk_"


def hash_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def create_api_key(tenant: Tenant, kind: str, label: str = "", *, actor: str = "") -> tuple[ApiKey, str]:
    """A new key for `tenant`, audited; the raw key is returned once and never stored."""
    if kind not in Source.values:
        raise ValueError(f"API key kind must be one of {', '.join(Source.values)}, got {kind!r}")
    raw_key = f"{KEY_PREFIX}{kind[0]}_{secrets.token_urlsafe(32)}"
    with transaction.atomic():
        key = ApiKey.objects.create(
            tenant=tenant, kind=kind, label=label, prefix=raw_key[:10], key_hash=hash_key(raw_key)
        )
        record_event(tenant, EventClass.KEY_CREATED, actor=actor)
    return key, raw_key


def revoke_api_key(key: ApiKey, *, actor: str = "") -> None:
    """Revoke `key` (audited); requests with it answer 401 from now on. Revoking twice changes nothing."""
    if key.revoked_at is not None:
        return
    with transaction.atomic():
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        record_event(key.tenant, EventClass.KEY_REVOKED, actor=actor)


def authenticate(raw_key: str) -> ApiKey | None:
    """The live key matching `raw_key`, or None for unknown and revoked keys alike."""
    if not raw_key:
        return None
    return ApiKey.objects.select_related("tenant").filter(key_hash=hash_key(raw_key), revoked_at__isnull=True).first()


def refuse_foreign_writes(key: ApiKey | None, conversations: Iterable[Conversation]) -> None:
    """403 when a client key writes to a conversation holding history it did not write (a server key's, an
    import's, another client key's); call it with the conversations locked, so no writer slips in between.

    403, not 404: the request is well formed and its key known, only not allowed; and unlike a read, a refused
    write shows nothing of the conversation. A 404 would also tell an agent to create what already exists.
    """
    if key is None or key.kind != Source.CLIENT:
        return
    by_pk = {conversation.pk: conversation.external_id for conversation in conversations}
    foreign = (
        scoped(Snapshot, key.tenant)
        .filter(run__tenant=key.tenant, run__conversation_id__in=list(by_pk))
        .exclude(api_key=key)  # also snapshots of no key (imports, deleted keys)
        .values_list("run__conversation_id", flat=True)
        .first()
    )
    if foreign is not None:
        raise RejectedInput(
            f"A client key writes only to conversations it started: conversation '{by_pk[foreign]}' holds history "
            "written by another key.",
            status=403,
        )
