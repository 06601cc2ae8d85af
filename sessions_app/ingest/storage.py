"""Content-addressed message storage: one StoredMessage row per distinct serialized message of a tenant."""

from collections.abc import Iterable

from sessions_app.models import StoredMessage


def store_messages(tenant_id: int, wanted: dict[str, tuple[str, str]]) -> tuple[dict[str, int], int]:
    """StoredMessage ids by sha256 for `wanted` (sha256 -> content hash, serialized message), inserting only the
    ones the tenant never stored; returns the ids and how many were inserted. A query per 500 messages."""
    ids: dict[str, int] = {}
    shas = list(wanted)
    for start in range(0, len(shas), 500):
        chunk = shas[start : start + 500]
        ids.update(StoredMessage.objects.filter(tenant_id=tenant_id, sha256__in=chunk).values_list("sha256", "id"))
    # Sorted, and conflicts ignored: two writers storing the same new message (a shared system prompt) both
    # succeed, and each waits for the other's rows in the same order, so they cannot deadlock.
    missing = sorted(sha for sha in shas if sha not in ids)
    StoredMessage.objects.bulk_create(
        [
            StoredMessage(tenant_id=tenant_id, sha256=sha, content_hash=wanted[sha][0], data=wanted[sha][1])
            for sha in missing
        ],
        batch_size=500,
        ignore_conflicts=True,
    )
    for start in range(0, len(missing), 500):
        chunk = missing[start : start + 500]
        ids.update(StoredMessage.objects.filter(tenant_id=tenant_id, sha256__in=chunk).values_list("sha256", "id"))
    return ids, len(missing)


def existing_message_ids(tenant_id: int, message_ids: Iterable[int]) -> set[int]:
    """Which of these StoredMessage ids the tenant still has (by primary key: a query per 2,000)."""
    wanted = sorted(set(message_ids))
    found: set[int] = set()
    for start in range(0, len(wanted), 2000):
        chunk = wanted[start : start + 2000]
        found.update(StoredMessage.objects.filter(tenant_id=tenant_id, id__in=chunk).values_list("id", flat=True))
    return found
