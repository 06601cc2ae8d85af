"""Content-addressed message storage: one StoredMessage row per distinct serialized message of a tenant."""

from collections.abc import Iterable

from django.db import connection

from sessions_app.models import StoredMessage

_TABLE = StoredMessage._meta.db_table


def store_messages(tenant_id: int, wanted: dict[str, tuple[str, str]]) -> tuple[dict[str, int], int]:
    """StoredMessage ids by sha256 for `wanted` (sha256 -> content hash, serialized message), inserting only the
    ones the tenant never stored; returns the ids and how many were inserted. A query per 500 messages."""
    if connection.vendor == "postgresql":
        return _insert_returning(tenant_id, wanted)
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


def _insert_returning(tenant_id: int, wanted: dict[str, tuple[str, str]]) -> tuple[dict[str, int], int]:
    """`store_messages` on PostgreSQL: one INSERT per 500 that answers the ids of the rows it made, then a SELECT only
    of those it did not (stored before, or by a writer it waited for), instead of a SELECT before and after: a run's
    few new messages cost one statement, not three."""
    ids: dict[str, int] = {}
    inserted = 0
    shas = sorted(wanted)  # in one order, as below: two writers of the same new rows wait, never deadlock
    with connection.cursor() as cursor:
        for start in range(0, len(shas), 500):
            chunk = shas[start : start + 500]
            cursor.execute(
                f"INSERT INTO {_TABLE} (tenant_id, sha256, content_hash, data)"  # noqa: S608 - the model's table, bound values
                " SELECT %s, s, c, d FROM unnest(%s::varchar[], %s::varchar[], %s::text[]) WITH ORDINALITY"
                " AS t(s, c, d, n) ORDER BY n ON CONFLICT DO NOTHING RETURNING sha256, id",
                [tenant_id, chunk, [wanted[sha][0] for sha in chunk], [wanted[sha][1] for sha in chunk]],
            )
            made = dict(cursor.fetchall())
            inserted += len(made)
            ids.update(made)
            if len(made) < len(chunk):
                earlier = [sha for sha in chunk if sha not in made]
                stored = StoredMessage.objects.filter(tenant_id=tenant_id, sha256__in=earlier)
                ids.update(stored.values_list("sha256", "id"))
    return ids, inserted


def existing_message_ids(tenant_id: int, message_ids: Iterable[int]) -> set[int]:
    """Which of these StoredMessage ids the tenant still has (by primary key: a query per 2,000)."""
    wanted = sorted(set(message_ids))
    found: set[int] = set()
    for start in range(0, len(wanted), 2000):
        chunk = wanted[start : start + 2000]
        found.update(StoredMessage.objects.filter(tenant_id=tenant_id, id__in=chunk).values_list("id", flat=True))
    return found
