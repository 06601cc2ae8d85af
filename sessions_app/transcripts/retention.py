"""Retention: delete each tenant's conversations with no activity for longer than its retention period.

Deletion itself is store.delete_conversations (rows and search index entries in one transaction).
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from sessions_app.models import Conversation, Tenant
from sessions_app.tenancy.scoping import scoped
from sessions_app.transcripts.store import delete_conversations


def cutoff(now: datetime, retention_days: int | None) -> datetime | None:
    """Pure: conversations with no activity since this instant are expired; None keeps everything."""
    if not retention_days:
        return None
    return now - timedelta(days=retention_days)


def expired_conversations(tenant: Tenant, now: datetime | None = None) -> QuerySet[Conversation]:
    limit = cutoff(now or timezone.now(), tenant.retention_days)
    if limit is None:
        return scoped(Conversation, tenant).none()
    # The runs' own times (B9), as the list and the overview read them; never when a row was last written.
    return scoped(Conversation, tenant).filter(last_activity_at__lt=limit)


@dataclass(frozen=True)
class RetentionResult:
    tenant: str
    cutoff: datetime | None
    deleted: int


def apply_retention(tenant: Tenant, now: datetime | None = None, *, dry_run: bool = False) -> RetentionResult:

    now = now or timezone.now()
    expired = expired_conversations(tenant, now)
    if dry_run:
        return RetentionResult(tenant.slug, cutoff(now, tenant.retention_days), expired.count())
    return RetentionResult(tenant.slug, cutoff(now, tenant.retention_days), delete_conversations(expired))
