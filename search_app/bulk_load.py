"""After a bulk load (`import_sessions`): fold what it wrote and refresh the planner's statistics.

A load leaves its documents in the tail, which every search scores directly; folding them before the command
returns means the first search after an import already reads blocks. PostgreSQL's autovacuum never analyses a
partitioned parent, and fresh partitions get their first statistics only after autovacuum's threshold: without
them the planner's choices alone made search 6 to 13 times slower (issue 25). ANALYZE of a partitioned parent
also analyses each of its partitions.
"""

from collections.abc import Callable

from django.db import connection

from search_app import folding
from search_app.models import ConversationIndex, DeletedDocument, PostingBlock, SearchDocument, UnfoldedDocument
from sessions_app.models import SnapshotMessage, StoredMessage, TranscriptEntry

ANALYZE_AT = 10_000
"""New messages in one load past which it analyses: below that autovacuum's own thresholds keep up."""
LOADED_TABLES = tuple(
    model._meta.db_table
    for model in (
        StoredMessage,
        SnapshotMessage,
        TranscriptEntry,
        SearchDocument,
        PostingBlock,
        UnfoldedDocument,
        DeletedDocument,
        ConversationIndex,
    )
)


def settle(tenant_id: int, new_messages: int, progress: Callable[[int], None] | None = None) -> int:
    """Fold the tenant's tail (`progress` gets the documents folded so far) and, after a big load on PostgreSQL,
    ANALYZE the tables it filled; returns documents folded."""
    folded = folding.fold_tenant(tenant_id, progress=progress)
    if connection.vendor == "postgresql" and new_messages >= ANALYZE_AT:
        with connection.cursor() as cursor:
            for table in LOADED_TABLES:
                cursor.execute(f'ANALYZE "{table}"')
    return folded
