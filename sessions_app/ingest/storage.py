"""Content-addressed message storage: one StoredMessage row per distinct serialized message of a tenant."""

from collections.abc import Iterable

from django.db import connection

from sessions_app.models import StoredMessage
from sessions_app.tenancy.bulk_update import plain_postgres


def store_messages(tenant_id: int, wanted: dict[str, tuple[str, str]]) -> tuple[dict[str, int], int]:
    """StoredMessage ids by sha256 for `wanted` (sha256 -> content hash, serialized message), inserting only the
    ones the tenant never stored; returns the ids and how many were inserted. A query per 500 messages (on plain
    PostgreSQL three queries in all, the values as arrays: a model object per row cost more than the rows)."""
    if plain_postgres():
        return _store_messages_postgres(tenant_id, wanted)
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


def _store_messages_postgres(tenant_id: int, wanted: dict[str, tuple[str, str]]) -> tuple[dict[str, int], int]:
    """`store_messages` on plain PostgreSQL: the known ids, the missing rows inserted in sha256 order (conflicts
    ignored, as above), their ids."""
    table = StoredMessage._meta.db_table
    select = f"SELECT sha256, id FROM {table} WHERE tenant_id = %s AND sha256 = ANY(%s::text[])"  # noqa: S608 - the model's table
    ids: dict[str, int] = {}
    with connection.cursor() as cursor:
        if wanted:
            cursor.execute(select, [tenant_id, list(wanted)])
            ids.update(cursor.fetchall())
        missing = sorted(sha for sha in wanted if sha not in ids)
        if missing:
            cursor.execute(
                f"INSERT INTO {table} (tenant_id, sha256, content_hash, data)"  # noqa: S608 - the model's table, bound values
                " SELECT %s, s, c, d FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS t(s, c, d, n)"
                " ORDER BY n ON CONFLICT (tenant_id, sha256) DO NOTHING",
                [tenant_id, missing, [wanted[sha][0] for sha in missing], [wanted[sha][1] for sha in missing]],
            )
            cursor.execute(select, [tenant_id, missing])
            ids.update(cursor.fetchall())
    return ids, len(missing)


def existing_message_ids(tenant_id: int, message_ids: Iterable[int]) -> set[int]:
    """Which of these StoredMessage ids the tenant still has (by primary key: a query per 2,000)."""
    wanted = sorted(set(message_ids))
    found: set[int] = set()
    for start in range(0, len(wanted), 2000):
        chunk = wanted[start : start + 2000]
        found.update(StoredMessage.objects.filter(tenant_id=tenant_id, id__in=chunk).values_list("id", flat=True))
    return found
