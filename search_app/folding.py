"""Folding: the unfolded tail of a tenant's search documents into its posting blocks, and tombstones out of them.

New documents are written in the transcript's transaction (search_app.index), and a trigger puts each in the
tail (search_app_unfoldeddocument, migration 0005); they are searchable at once: the block ranker scores the
tail directly (search_app.ranking.block_ranking). Once a tenant's tail reaches `SESSIONDESK_SEARCH_FOLD_AT`
documents (2,000) or its tombstones `PURGE_AT`, the commit that made it so folds it inline on SQLite (one writer at
a time there anyway; the setting `SESSIONDESK_SEARCH_FOLD_INLINE` decides otherwise). Everywhere else the fold worker
(search_app.fold_worker, a process `manage.py serve` supervises) folds every tail it finds, and `import_sessions`
folds what it wrote before it returns; `manage.py reindex --pending` folds whatever is left.

A fold, in one transaction per batch of documents, under a per-tenant lock: read the batch (locking its tail
rows, so a concurrent delete waits, then finds the tail row gone and leaves a tombstone), invert it
(search_app.blocks.invert), and for each term touched rewrite only the blocks that change: the term's last
block and any block whose id range the new documents fall in (appended, re-cut into blocks of 128), and any
block holding a tombstoned document (rewritten without it). Then delete the batch's tail rows and the
tombstones purged.
"""

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper

from search_app import blocks
from search_app.backends.base import SqlParams
from search_app.models import DeletedDocument, PostingBlock, SearchDocument, UnfoldedDocument

DOCS = SearchDocument._meta.db_table
BLOCKS = PostingBlock._meta.db_table
TOMBSTONES = DeletedDocument._meta.db_table
TAIL = UnfoldedDocument._meta.db_table
PURGE_AT = 500
"""Tombstones of a tenant that trigger a fold: each is read by every search of the tenant until purged."""
FOLD_BATCH = 50_000
"""Documents folded per transaction: bounds the memory of a fold and the time its locks are held."""
_TERMS_PER_QUERY = 500
_IDS_PER_QUERY = 900  # under SQLite's default limit of variables per statement
_LOCK_CLASS = 0x5EA4C4  # pg_advisory_xact_lock(class, tenant): one fold per tenant at a time


def fold_at() -> int:
    return settings.SESSIONDESK_SEARCH_FOLD_AT


@dataclass(slots=True)
class _Stored:
    key: int
    first: int
    last: int
    count: int
    is_last: bool
    postings: bytes
    positions: bytes
    conversations: bytes

    def columns(self) -> blocks.Columns:
        return blocks.decode_columns(
            blocks.EncodedBlock(
                self.first, self.last, self.count, self.postings, self.positions, b"", self.conversations
            )
        )


def _chunks[T](items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(count: int) -> str:
    return ", ".join(["%s"] * count)


def fold_tenant(tenant_id: int, batch: int | None = None, progress: Callable[[int], None] | None = None) -> int:
    """Fold the tenant's whole tail and purge its tombstones, `batch` documents a transaction (FOLD_BATCH); returns
    documents folded (`progress` gets the running total after each batch)."""
    batch = batch or FOLD_BATCH
    total = 0
    while True:
        folded, _purged = _fold_batch(tenant_id, batch)
        total += folded
        if progress is not None and folded:
            progress(total)
        if folded < batch:
            return total


def fold_everything() -> int:
    """Fold every tenant's tail and tombstones (migration 0005, `reindex --pending`, benchmarks)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT tenant_id FROM {TAIL} UNION SELECT DISTINCT tenant_id FROM {TOMBSTONES}")  # noqa: S608 - constant tables, bound values
        tenants = sorted(row[0] for row in cursor.fetchall())
    return sum(fold_tenant(tenant_id) for tenant_id in tenants)


def _fold_batch(tenant_id: int, batch: int) -> tuple[int, int]:
    postgres = connection.vendor == "postgresql"
    with transaction.atomic(), connection.cursor() as cursor:
        if postgres:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_CLASS, tenant_id])
        cursor.execute(
            f"SELECT d.id, d.terms, d.conversation_id FROM {TAIL} t "  # noqa: S608 - constant tables, bound values
            f"JOIN {DOCS} d ON d.tenant_id = t.tenant_id AND d.id = t.document_id "
            "WHERE t.tenant_id = %s ORDER BY t.document_id LIMIT %s" + (" FOR UPDATE OF t" if postgres else ""),
            [tenant_id, batch],
        )
        rows = cursor.fetchall()
        cursor.execute(f"SELECT document_id, terms FROM {TOMBSTONES} WHERE tenant_id = %s", [tenant_id])  # noqa: S608 - constant tables, bound values
        dead = cursor.fetchall()
        if not rows and not dead:
            return 0, 0
        inverted = blocks.invert((key, terms.split(" "), owner) for key, terms, owner in rows if terms)
        new = {term: i for i, term in enumerate(inverted.terms)}
        removed: dict[str, set[int]] = defaultdict(set)
        for key, terms in dead:
            for term in set(terms.split(" ")):
                removed[term].add(key)
        touched = sorted(set(new) | set(removed))
        first_new = rows[0][0] if rows else None
        dead_ids = [key for key, _ in dead]
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {BLOCKS} WHERE tenant_id = %s)", [tenant_id])  # noqa: S608 - constant tables, bound values
        has_blocks = bool(cursor.fetchone()[0])
        for terms in _chunks(touched, _TERMS_PER_QUERY):
            # A tenant's first fold (an import's, say) has no blocks to rewrite: nothing to look up term by term.
            stored = _stored_blocks(cursor, tenant_id, terms, first_new, dead_ids) if has_blocks else {}
            deletes: list[int] = []
            inserts: list[tuple[int | str | bool | bytes, ...]] = []
            for term in terms:
                i = new.get(term)
                if term not in stored and term not in removed and i is not None:
                    # A term new to the tenant (or the whole first fold): blocks straight from the batch.
                    cut = inverted.blocks(i)
                    inserts.extend(_row(tenant_id, term, b, n == len(cut) - 1) for n, b in enumerate(cut))
                    continue
                columns = inverted.columns(i) if i is not None else None
                _rewrite(tenant_id, term, stored.get(term, []), columns, removed.get(term, set()), deletes, inserts)
            _delete(cursor, BLOCKS, "id", tenant_id, deletes)
            _insert(cursor, inserts)
        _delete(cursor, TAIL, "document_id", tenant_id, [row[0] for row in rows])
        _delete(cursor, TOMBSTONES, "document_id", tenant_id, dead_ids)
    return len(rows), len(dead)


def _delete(cursor: CursorWrapper, table: str, column: str, tenant_id: int, keys: Sequence[int]) -> None:
    """The tenant's rows of `table` whose `column` is one of `keys`: one statement on PostgreSQL (an array), where
    statements of 900 ids each were half of a fold's statement time (profiled); chunks under SQLite's limit of
    variables elsewhere."""
    if not keys:
        return
    if connection.vendor == "postgresql":
        cursor.execute(f"DELETE FROM {table} WHERE tenant_id = %s AND {column} = ANY(%s)", [tenant_id, list(keys)])  # noqa: S608 - constant tables, bound values
        return
    for chunk in _chunks(keys, _IDS_PER_QUERY):
        marks = _marks(len(chunk))
        cursor.execute(f"DELETE FROM {table} WHERE tenant_id = %s AND {column} IN ({marks})", [tenant_id, *chunk])  # noqa: S608 - constant tables, bound values


def _stored_blocks(
    cursor: CursorWrapper, tenant_id: int, terms: Sequence[str], first_new: int | None, dead_ids: Sequence[int]
) -> dict[str, list[_Stored]]:
    """The blocks of these terms a fold may rewrite: each term's last block, those reaching past the first new
    document, and those whose range spans a tombstoned document (a superset; `_rewrite` picks)."""
    conditions = ["is_last = %s"]
    params: SqlParams = [True]
    if first_new is not None:
        conditions.append("last_document >= %s")
        params.append(first_new)
    if dead_ids:
        conditions.append("(first_document <= %s AND last_document >= %s)")
        params += [max(dead_ids), min(dead_ids)]
    cursor.execute(
        f"SELECT id, term, first_document, last_document, count, is_last, postings, positions, conversations "  # noqa: S608 - constant tables, bound values
        f"FROM {BLOCKS} "
        f"WHERE tenant_id = %s AND term IN ({_marks(len(terms))}) AND ({' OR '.join(conditions)})",
        [tenant_id, *terms, *params],
    )
    found: dict[str, list[_Stored]] = defaultdict(list)
    for key, term, first, last, count, is_last, postings, positions, owners in cursor.fetchall():
        block = _Stored(key, first, last, count, bool(is_last), bytes(postings), bytes(positions), bytes(owners))
        found[term].append(block)
    for stored in found.values():
        stored.sort(key=lambda block: block.first)
    return found


_COLUMNS = (
    "tenant_id, term, first_document, last_document, count, is_last, postings, positions, frontier, conversations"
)


def _insert(cursor: CursorWrapper, rows: Sequence[tuple[int | str | bool | bytes, ...]]) -> None:
    """New blocks as plain rows (a model instance per block would cost more than encoding it): COPY on PostgreSQL,
    where an INSERT a row was 40 % of a first fold (profiled); executemany elsewhere."""
    if not rows:
        return
    if connection.vendor == "postgresql":
        with cursor.cursor.copy(f"COPY {BLOCKS} ({_COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    else:
        cursor.executemany(f"INSERT INTO {BLOCKS} ({_COLUMNS}) VALUES ({_marks(10)})", rows)  # noqa: S608 - constant tables, bound values


def _row(tenant_id: int, term: str, block: blocks.EncodedBlock, is_last: bool) -> tuple[int | str | bool | bytes, ...]:
    return (
        tenant_id,
        term,
        block.first,
        block.last,
        block.count,
        is_last,
        block.postings,
        block.positions,
        block.frontier,
        block.conversations,
    )


def _rewrite(
    tenant_id: int,
    term: str,
    stored: list[_Stored],
    new: blocks.Columns | None,
    dead: set[int],
    deletes: list[int],
    inserts: list[tuple[int | str | bool | bytes, ...]],
) -> None:
    """One term's changed blocks: `deletes` gets the rows replaced, `inserts` their replacements."""
    suffix = len(stored)
    if new is not None:
        first_new = int(new.ids[0])
        suffix = next((i for i, b in enumerate(stored) if b.last >= first_new or b.is_last), len(stored))
    for block in stored[:suffix]:
        if dead and any(block.first <= key <= block.last for key in dead):
            kept = block.columns().without(dead)
            deletes.append(block.key)
            if len(kept):
                # Fewer documents in the same id range: blocks of the term still never overlap.
                inserts.extend(_row(tenant_id, term, b, block.is_last) for b in blocks.chunk_columns(kept))
    if new is None:
        return
    merged = blocks.Columns.merge([*(b.columns().without(dead) for b in stored[suffix:]), new])
    deletes.extend(b.key for b in stored[suffix:])
    cut = blocks.chunk_columns(merged)
    inserts.extend(_row(tenant_id, term, b, i == len(cut) - 1) for i, b in enumerate(cut))


def tail_sizes(tenant_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """(unfolded documents, tombstones) per tenant, each counted up to the level that triggers a fold."""
    sizes: dict[int, tuple[int, int]] = {}
    limit = fold_at()
    with connection.cursor() as cursor:
        for tenant_id in sorted(set(tenant_ids)):
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {TAIL} WHERE tenant_id = %s LIMIT %s) AS t",  # noqa: S608 - constant tables, bound values
                [tenant_id, limit],
            )
            tail = cursor.fetchone()[0]
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {TOMBSTONES} WHERE tenant_id = %s LIMIT %s) AS t",  # noqa: S608 - constant tables, bound values
                [tenant_id, PURGE_AT],
            )
            sizes[tenant_id] = (tail, cursor.fetchone()[0])
    return sizes


def fold_when_due(tenant_ids: Iterable[int]) -> None:
    """After a commit: fold the tenants whose tail or tombstones reached their level, in this process where
    `SESSIONDESK_SEARCH_FOLD_INLINE` says so; otherwise the fold worker (search_app.fold_worker) takes them."""
    if not settings.SESSIONDESK_SEARCH_FOLD_INLINE:
        return
    for tenant_id, (tail, dead) in tail_sizes(tenant_ids).items():
        if tail >= fold_at() or dead >= PURGE_AT:
            fold_tenant(tenant_id)
