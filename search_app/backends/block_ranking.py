"""Tenant-wide ranking from posting blocks (search_app.blocks, search_app.topk), on PostgreSQL and SQLite alike.

For queries of words and phrases (not CJK phrases, not prefixes), optionally excluding words or phrases, over
one or more whole tenants, without role, agent, tool or time filters; anything else goes to the other exact
rankers. Three reads, all by index: the blocks' metadata for the query's terms (ids, sizes, frontiers; no
payload), the tenants' tombstones, and the tenants' unfolded tail documents holding a query word (at most a few
thousand rows by a partial index). df per term is the blocks' sizes, less tombstoned documents holding it, plus
tail documents holding it: exact. The tail is scored by search_app.bm25 and seeds the top k; then
search_app.topk reads only the blocks it must, their postings in one query per step and positions only for
phrases.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from django.db import connection

from search_app import bm25, topk
from search_app.backends.base import DOCS, Filters, Scope
from search_app.backends.counting import MatchCounts
from search_app.blocks import DecodedBlock, decode, decode_frontier
from search_app.query import ParsedQuery, Phrase, Term
from search_app.tokenize import is_cjk

BLOCKS = "search_app_postingblock"
TOMBSTONES = "search_app_deleteddocument"
TAIL = "search_app_unfoldeddocument"
_ALL = 2**62
_IDS_PER_QUERY = 900  # under SQLite's default limit of variables per statement


def blocks_rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
    return (
        scope.conversation_pk is None
        and scope.run_pk is None
        and not scope.exclude_pending
        and filters == Filters()
        and all(
            isinstance(clause, Term)
            or (isinstance(clause, Phrase) and not any(is_cjk(term[0]) for term in clause.terms))
            for clause in query.should + query.must_not
        )
    )


def _marks(values: Sequence[object]) -> str:
    return ", ".join(["%s"] * len(values))


class _Reader:
    """Block payloads by row id: one query for every block a step of the top-k search asks for.

    For a query with phrases, positions come with the postings in the same query: every block a phrase's
    documents are verified in is read for both.
    """

    def __init__(self, with_positions: bool) -> None:
        self.with_positions = with_positions
        self.read_positions: dict[int, bytes] = {}
        self.reads = 0

    def postings(self, keys: Collection[int]) -> dict[int, DecodedBlock]:
        keys = sorted(keys)
        self.reads += len(keys)
        extra = ", positions" if self.with_positions else ""
        out = {}
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, first_document, count, postings{extra} FROM {BLOCKS} WHERE id IN ({_marks(keys)})", keys
            )
            for key, first, count, data, *positions in cursor.fetchall():
                out[key] = decode(first, count, bytes(data))
                if positions:
                    self.read_positions[key] = bytes(positions[0])
        return out

    def positions(self, keys: Collection[int]) -> dict[int, bytes]:
        missing = sorted(set(keys) - self.read_positions.keys())
        if missing:
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT id, positions FROM {BLOCKS} WHERE id IN ({_marks(missing)})", missing)
                self.read_positions.update((key, bytes(data)) for key, data in cursor.fetchall())
        return {key: self.read_positions[key] for key in keys}


@dataclass(slots=True)
class _Prepared:
    """What both ranking and counting need: the blocks' metadata, exact df, tombstones and the scored tail."""

    infos: list[topk.BlockInfo]
    df: dict[str, int]
    deleted: set[int]
    tail: list[tuple[int, float]]
    reader: _Reader


def _prepare(query: ParsedQuery, scope: Scope, stats: bm25.ScopeStats, params: bm25.Bm25Params) -> _Prepared:
    tenants = list(scope.tenant_ids)
    every_term = list(dict.fromkeys(t for c in query.should + query.must_not for t in topk.clause_terms(c)))
    positive = list(dict.fromkeys(t for c in query.should for t in topk.clause_terms(c)))
    max_document = scope.max_document_id
    reader = _Reader(any(isinstance(c, Phrase) for c in query.should + query.must_not))
    upto = "" if max_document is None else " AND first_document <= %s"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, tenant_id, term, first_document, last_document, count, frontier FROM {BLOCKS} "
            f"WHERE tenant_id IN ({_marks(tenants)}) AND term IN ({_marks(every_term)}){upto}",
            [*tenants, *every_term, *([] if max_document is None else [max_document])],
        )
        infos = []
        df = dict.fromkeys(every_term, 0)
        straddling = []
        for key, tenant, term, first, last, count, frontier in cursor.fetchall():
            tfs, lengths = decode_frontier(bytes(frontier))
            infos.append(topk.BlockInfo(key, tenant, term, first, last, count, tfs, lengths))
            if max_document is not None and last > max_document:
                straddling.append((key, term))
            else:
                df[term] += count
        # A later page sees the index as the first did: documents past its newest are out of df too.
        if straddling and max_document is not None:
            decoded = reader.postings([key for key, _ in straddling])
            for key, term in straddling:
                df[term] += int((decoded[key].ids <= max_document).sum())

        cursor.execute(
            f"SELECT document_id, terms FROM {TOMBSTONES} WHERE tenant_id IN ({_marks(tenants)})"
            + ("" if max_document is None else " AND document_id <= %s"),
            [*tenants, *([] if max_document is None else [max_document])],
        )
        deleted: set[int] = set()
        for key, terms in cursor.fetchall():
            deleted.add(key)
            for term in set(terms.split(" ")).intersection(every_term):
                df[term] -= 1

        holds = " OR ".join(["(' ' || d.terms || ' ') LIKE %s"] * len(positive))
        cursor.execute(
            f"SELECT d.id, d.length, d.terms FROM {TAIL} t JOIN {DOCS} d ON d.id = t.document_id "
            f"WHERE t.tenant_id IN ({_marks(tenants)})"
            + ("" if max_document is None else " AND t.document_id <= %s")
            + f" AND ({holds})",
            [*tenants, *([] if max_document is None else [max_document]), *[f"% {t} %" for t in positive]],
        )
        tail = [bm25.Document(key, terms, length=length) for key, length, terms in cursor.fetchall()]
    for document in tail:
        for term in every_term:
            if document.has(term):
                df[term] += 1
    score = bm25.scorer(query, {t: n for t, n in df.items() if n > 0}, stats, params)
    scored = []
    for document in tail:
        if not bm25.excluded(query, document):
            value = score(document)
            if value > 0.0:
                scored.append((document.key, value))
    return _Prepared(infos, df, deleted, scored, reader)


def rank_with_blocks(
    query: ParsedQuery, scope: Scope, stats: bm25.ScopeStats, params: bm25.Bm25Params, limit: int
) -> list[tuple[int, float]]:
    """The top `limit` (document id, score) of the scope, best first, ties by id."""
    if stats.documents == 0:
        return []
    found = _prepare(query, scope, stats, params)
    return topk.top_k(
        query,
        found.infos,
        found.df,
        stats,
        params,
        found.reader,
        limit,
        seeds=found.tail,
        skip=found.deleted,
        max_document=scope.max_document_id,
    )


def count_with_blocks(
    query: ParsedQuery, scope: Scope, stats: bm25.ScopeStats, params: bm25.Bm25Params
) -> tuple[MatchCounts, list[tuple[int, float]]]:
    """Matching messages and their conversations, and the whole ranking they come with: every block of the
    query's clauses is read (no pruning), so the ranking is complete and no page needs ranking again.

    For phrases and exclusions: testing each candidate's terms in SQL reads every document holding any of the
    words; the blocks name the documents holding all of a phrase's words and their positions decide.
    """
    if stats.documents == 0:
        return MatchCounts(), []
    found = _prepare(query, scope, stats, params)
    every = topk.top_k(
        query,
        found.infos,
        found.df,
        stats,
        params,
        found.reader,
        _ALL,
        seeds=found.tail,
        skip=found.deleted,
        max_document=scope.max_document_id,
    )
    keys = [key for key, _ in every]
    conversations: set[int] = set()
    with connection.cursor() as cursor:
        for start in range(0, len(keys), _IDS_PER_QUERY):
            chunk = keys[start : start + _IDS_PER_QUERY]
            cursor.execute(f"SELECT DISTINCT conversation_id FROM {DOCS} WHERE id IN ({_marks(chunk)})", chunk)
            conversations.update(row[0] for row in cursor.fetchall())
    return MatchCounts(len(keys), len(conversations)), every
