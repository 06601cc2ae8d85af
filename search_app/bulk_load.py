"""After a bulk load (`import_sessions`): fold what it wrote and refresh the planner's statistics.

A load leaves its documents in the tail, which every search scores directly; folding them before the command
returns means the first search after an import already reads blocks. PostgreSQL's autovacuum never analyses a
partitioned parent, fresh partitions get their first statistics only a minute or more after autovacuum's threshold
(and never where autovacuum is off), and the fold empties the tail the planner last saw full: without fresh
statistics the planner's choices alone made search 6 to 13 times slower (issue 25). ANALYZE of a partitioned parent
also analyses each of its partitions.
"""

from collections.abc import Callable

from django.db import connection
from django.db.backends.utils import CursorWrapper

from search_app import folding
from search_app.models import ConversationIndex, DeletedDocument, PostingBlock, SearchDocument, UnfoldedDocument
from sessions_app.models import SnapshotMessage, StoredMessage, TranscriptEntry

ANALYZE_AT = 10_000
"""New messages in one load past which the partitioned parents are analysed too, not only the tenant's partitions."""
LOADED_TABLES = tuple(
    model._meta.db_table
    for model in (
        StoredMessage,
        SnapshotMessage,
        TranscriptEntry,
        SearchDocument,
        PostingBlock,
        DeletedDocument,
        ConversationIndex,
    )
)
TAIL = UnfoldedDocument._meta.db_table


def settle(tenant_id: int, new_messages: int, progress: Callable[[int], None] | None = None) -> int:
    """Fold the tenant's tail (`progress` gets the documents folded so far) and, on PostgreSQL, refresh the planner's
    statistics of what the load changed; returns documents folded."""
    folded = folding.fold_tenant(tenant_id, progress=progress)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            if folded:
                # The fold emptied the tail: a planner that still counts its rows scans the tenant's documents to
                # join them (26 ms of a 27 ms search at 6,800 messages), and its index walks every folded row.
                cursor.execute(f'{"ANALYZE" if connection.in_atomic_block else "VACUUM ANALYZE"} "{TAIL}"')
            for table in _stale(cursor, tenant_id, new_messages):
                cursor.execute(f'ANALYZE "{table}"')
    return folded


def _stale(cursor: CursorWrapper, tenant_id: int, new_rows: int) -> list[str]:
    """The loaded tables (the tenant's partition of a partitioned one) whose statistics a load of `new_rows` left
    behind, by autovacuum's own rule (more changed than 50 rows plus a tenth of the rows last counted), which a
    fresh load outruns and which never analyses a partitioned parent."""
    if not new_rows:
        return []
    stale = []
    for table in LOADED_TABLES:
        cursor.execute(f'SELECT tableoid::regclass::text FROM "{table}" WHERE tenant_id = %s LIMIT 1', [tenant_id])  # noqa: S608 - constant tables, bound values
        row = cursor.fetchone()
        if row is None:
            continue
        cursor.execute(
            "SELECT c.oid::regclass::text, c.reltuples FROM pg_class c WHERE c.oid = to_regclass(%s)", [row[0]]
        )
        part = cursor.fetchone()
        if part is None:  # Citus: the row came from a worker's shard; the coordinator analyses whole tables only
            if new_rows >= ANALYZE_AT:
                stale.append(table)
            continue
        name, counted = part
        if counted < 0 or new_rows > 50 + 0.1 * counted:
            stale.append(name)
        if new_rows >= ANALYZE_AT and name != table:
            stale.append(table)
    return stale
