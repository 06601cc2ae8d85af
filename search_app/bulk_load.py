"""After a bulk load (`import_sessions`): fold what it wrote and refresh the planner's statistics; and on a live
server, after the fold worker folds a tenant, the statistics of what changed since they were last refreshed.

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
from sessions_app.models import Conversation, Run, Snapshot, SnapshotMessage, StoredMessage, TranscriptEntry

ANALYZE_AT = 10_000
"""New messages in one load past which the partitioned parents are analysed too, not only the tenant's partitions."""
LOADED_TABLES = tuple(
    model._meta.db_table
    for model in (
        # Ingestion joins these on every write (a conversation's runs and their newest snapshots): with the
        # statistics of empty tables the planner read every run of the tenant for each snapshot.
        Conversation,
        Run,
        Snapshot,
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


def analyze_changed(tenant_id: int) -> list[str]:
    """On a live server (the fold worker, after folding a tenant): ANALYZE the tenant's partitions that changed past
    autovacuum's rule since they were last analysed, counted by PostgreSQL itself (`n_mod_since_analyze`, kept
    whether autovacuum runs or not), so many small writes add up as one load does; returns what it analysed.
    Nothing on Citus, whose shards are analysed by their workers' autovacuum."""
    if connection.vendor != "postgresql":
        return []
    analysed = []
    with connection.cursor() as cursor:
        for table in (*LOADED_TABLES, TAIL):
            cursor.execute(f'SELECT tableoid::regclass::text FROM "{table}" WHERE tenant_id = %s LIMIT 1', [tenant_id])  # noqa: S608 - constant tables, bound values
            row = cursor.fetchone()
            if row is None and table != TAIL:
                continue
            cursor.execute(
                "SELECT c.oid::regclass::text, c.reltuples, s.n_mod_since_analyze FROM pg_class c"
                " JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = to_regclass(%s)",
                [row[0] if row is not None else table],
            )
            part = cursor.fetchone()
            if part is not None and part[2] > 50 + 0.1 * max(part[1], 0):
                # The tail is written and emptied again and again: its dead rows go too, where no transaction holds.
                vacuum = table == TAIL and not connection.in_atomic_block
                cursor.execute(f'{"VACUUM ANALYZE" if vacuum else "ANALYZE"} "{part[0]}"')
                analysed.append(part[0])
    return analysed


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
