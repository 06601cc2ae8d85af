"""Tenant-wide ranking from posting blocks (search_app.blocks, search_app.topk), on PostgreSQL and SQLite alike.

For queries of words and phrases (not CJK phrases, not prefixes), optionally excluding words or phrases, over one
or more whole tenants, without role, agent, tool or time filters (one conversation or run:
search_app.ranking.scoped_blocks); anything else goes to the other exact rankers. One statement, each part by
index: the blocks' metadata for the query's terms (ids, sizes, frontiers; the payloads only of terms in at most
`INLINE` of a tenant's documents), the tenants' tombstones, and the tenants' unfolded tail documents holding a
query word (at most a few thousand rows). df per term
is the blocks' sizes, less tombstoned documents holding it, plus tail documents holding it: exact. The tail is
scored by search_app.bm25 and seeds the top k; then search_app.topk reads only the blocks it must, their postings
in one query per step and positions only for phrases.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection

from search_app import bm25, topk
from search_app.backends.base import DOCS, Filters, Scope, SqlParams
from search_app.blocks import DecodedBlock, decode, decode_frontier, decode_many
from search_app.query import ParsedQuery, Phrase, Term
from search_app.ranking.counting import count_bound
from search_app.ranking.protocol import MatchCounts, Ranked, RankInput
from search_app.tokenize import is_cjk

BLOCKS = "search_app_postingblock"
TOMBSTONES = "search_app_deleteddocument"
TAIL = "search_app_unfoldeddocument"
_IDS_PER_QUERY = 900  # under SQLite's default limit of variables per statement


def plain_clauses(query: ParsedQuery) -> bool:
    """Words and phrases of non-CJK words only: what blocks rank (prefixes and CJK phrases go elsewhere)."""
    return all(
        isinstance(clause, Term) or (isinstance(clause, Phrase) and not any(is_cjk(term[0]) for term in clause.terms))
        for clause in query.should + query.must_not
    )


def blocks_rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
    return (
        scope.conversation_pk is None
        and scope.run_pk is None
        and not scope.exclude_pending
        and filters == Filters()
        and plain_clauses(query)
    )


def _marks(values: Sequence[object]) -> str:
    return ", ".join(["%s"] * len(values))


class _Reader:
    """Block payloads by row id: one query for every block a step of the top-k search asks for.

    For a query with phrases, positions come with the postings in the same query: every block a phrase's
    documents are verified in is read for both.
    """

    def __init__(self, tenants: Sequence[int], with_positions: bool) -> None:
        self.tenants = list(tenants)  # blocks are keyed (tenant_id, id): the tenants name their partitions
        self.with_positions = with_positions
        self.read_positions: dict[int, bytes] = {}
        self.decoded: dict[int, DecodedBlock] = {}
        """Every block read, with its conversations: names the matches' conversations and serves the ranking again."""
        self.inline: dict[int, tuple[int, int, bytes, bytes]] = {}
        """Payloads read with the blocks' metadata (`_prepare`), decoded only when asked for."""

    def postings(self, keys: Collection[int]) -> dict[int, DecodedBlock]:
        for key in [key for key in keys if key in self.inline]:
            first, count, data, owners = self.inline.pop(key)
            self.decoded[key] = decode(first, count, data, owners)
        # Blocks a count already decoded are not read again by the ranking that follows it.
        out: dict[int, DecodedBlock] = {key: self.decoded[key] for key in keys if key in self.decoded}
        ordered = sorted(set(keys) - out.keys())
        columns = "conversations, positions" if self.with_positions else "conversations, NULL"
        with connection.cursor() as cursor:
            for start in range(0, len(ordered), _IDS_PER_QUERY):
                chunk = ordered[start : start + _IDS_PER_QUERY]
                cursor.execute(
                    f"SELECT id, first_document, count, postings, {columns} FROM {BLOCKS} "  # noqa: S608 - constant tables, bound values
                    f"WHERE tenant_id IN ({_marks(self.tenants)}) AND id IN ({_marks(chunk)})",
                    [*self.tenants, *chunk],
                )
                rows = cursor.fetchall()
                blocks = decode_many(
                    [(first, count, bytes(data), bytes(owners)) for _, first, count, data, owners, _ in rows]
                )
                for (key, *_, positions), block in zip(rows, blocks, strict=True):
                    out[key] = block
                    if positions is not None:
                        self.read_positions[key] = bytes(positions)
        self.decoded.update(out)
        return out

    def conversations_of(self, keys: Sequence[int]) -> set[int]:
        """The conversations of these documents, all of them in blocks this reader read."""
        if not keys or not self.decoded:
            return set()
        ids = np.concatenate([block.ids for block in self.decoded.values()])
        owners = np.concatenate(
            [block.conversations for block in self.decoded.values() if block.conversations is not None]
        )
        # A document read in several blocks (one per word) has the same conversation in each.
        return set(np.unique(owners[np.isin(ids, np.asarray(keys, dtype=np.int64))]).tolist())

    def decoded_conversations(self, deleted: Collection[int], max_document: int | None) -> set[int]:
        """The conversations of every live document in the blocks read so far (of words only: all matches)."""
        if not self.decoded:
            return set()
        ids = np.concatenate([block.ids for block in self.decoded.values()])
        owners = np.concatenate(
            [block.conversations for block in self.decoded.values() if block.conversations is not None]
        )
        keep = ~np.isin(ids, np.fromiter(deleted, dtype=np.int64, count=len(deleted)))
        if max_document is not None:
            keep &= ids <= max_document
        return set(np.unique(owners[keep]).tolist())  # a few hundred conversations of a hundred thousand rows

    def positions(self, keys: Collection[int]) -> dict[int, bytes]:
        missing = sorted(set(keys) - self.read_positions.keys())
        if missing:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT id, positions FROM {BLOCKS} "  # noqa: S608 - constant tables, bound values
                    f"WHERE tenant_id IN ({_marks(self.tenants)}) AND id IN ({_marks(missing)})",
                    [*self.tenants, *missing],
                )
                self.read_positions.update((key, bytes(data)) for key, data in cursor.fetchall())
        return {key: self.read_positions[key] for key in keys}


@dataclass(slots=True)
class _Prepared:
    """What both ranking and counting need: the blocks' metadata, exact df, tombstones and the scored tail."""

    infos: list[topk.BlockInfo]
    df: dict[str, int]
    deleted: set[int]
    tail: list[tuple[int, float]]
    tail_conversations: dict[int, int]
    reader: _Reader


INLINE = 2048
"""A term whose blocks hold at most this many documents of a tenant (16 full blocks) comes with its payloads in
the statement that reads the blocks' metadata: counting its matches, or scoring them, then reads nothing more."""


def _prepare(query: ParsedQuery, scope: Scope, stats: bm25.ScopeStats, params: bm25.Bm25Params) -> _Prepared:
    """One statement: the blocks of the query's terms (metadata, and the payloads of terms in few blocks), the
    tenants' tombstones and their tail documents holding a query word; each part by its own index."""
    tenants = list(scope.tenant_ids)
    every_term = list(dict.fromkeys(t for c in query.should + query.must_not for t in topk.clause_terms(c)))
    positive = list(dict.fromkeys(t for c in query.should for t in topk.clause_terms(c)))
    max_document = scope.max_document_id
    reader = _Reader(tenants, any(isinstance(c, Phrase) for c in query.should + query.must_not))
    upto: SqlParams = [] if max_document is None else [max_document]
    nothing = "CAST(NULL AS bytea)" if connection.vendor == "postgresql" else "NULL"
    inline = "b.total <= %s"
    payloads = f"CASE WHEN {inline} THEN b.postings END, CASE WHEN {inline} THEN b.conversations END, " + (
        f"CASE WHEN {inline} THEN b.positions END" if reader.with_positions else nothing
    )
    blocks = (
        f"SELECT 0 AS kind, b.id, b.tenant_id, b.term, b.first_document, b.last_document, b.count, b.frontier, "  # noqa: S608 - constant tables, bound values
        f"{payloads} FROM (SELECT id, tenant_id, term, first_document, last_document, count, frontier, postings, "
        f"conversations, {'positions' if reader.with_positions else nothing} AS positions, "
        f"SUM(count) OVER (PARTITION BY tenant_id, term) AS total FROM {BLOCKS} "
        f"WHERE tenant_id IN ({_marks(tenants)}) AND term IN ({_marks(every_term)})"
        + ("" if max_document is None else " AND first_document <= %s")
        + ") AS b"
    )
    empty = ", ".join([nothing] * 4)
    tombstones = (
        f"SELECT 1, document_id, tenant_id, terms, 0, 0, 0, {empty} FROM {TOMBSTONES} "  # noqa: S608 - constant tables, bound values
        f"WHERE tenant_id IN ({_marks(tenants)})" + ("" if max_document is None else " AND document_id <= %s")
    )
    holds = " OR ".join(["(' ' || d.terms || ' ') LIKE %s"] * len(positive))
    unfolded = (
        f"SELECT 2, d.id, d.conversation_id, d.terms, d.length, 0, 0, {empty} FROM {TAIL} t "  # noqa: S608 - constant tables, bound values
        f"JOIN {DOCS} d ON d.tenant_id = t.tenant_id AND d.id = t.document_id WHERE t.tenant_id IN ({_marks(tenants)})"
        + ("" if max_document is None else " AND t.document_id <= %s")
        + f" AND ({holds})"
    )
    sql = f"{blocks} UNION ALL {tombstones} UNION ALL {unfolded}"
    arguments: SqlParams = [*[INLINE] * (3 if reader.with_positions else 2), *tenants, *every_term, *upto]
    arguments += [*tenants, *upto, *tenants, *upto, *[f"% {t} %" for t in positive]]
    with connection.cursor() as cursor:
        cursor.execute(sql, arguments)
        rows = cursor.fetchall()
    infos = []
    df = dict.fromkeys(every_term, 0)
    straddling = []
    deleted: set[int] = set()
    tail: list[bm25.Document] = []
    tail_conversations: dict[int, int] = {}
    for kind, key, owner, text, first, last, count, frontier, data, owners, positions in rows:
        if kind == 0:
            tfs, lengths = decode_frontier(bytes(frontier))
            infos.append(topk.BlockInfo(key, owner, text, first, last, count, tfs, lengths))
            if data is not None:
                reader.inline[key] = (first, count, bytes(data), bytes(owners))
                if positions is not None:
                    reader.read_positions[key] = bytes(positions)
            if max_document is not None and last > max_document:
                straddling.append((key, text))
            else:
                df[text] += count
        elif kind == 1:
            deleted.add(key)
            for term in set(text.split(" ")).intersection(every_term):
                df[term] -= 1
        else:
            tail.append(bm25.Document(key, text, length=first))
            tail_conversations[key] = owner
    # A later page sees the index as the first did: documents past its newest are out of df too.
    if straddling and max_document is not None:
        decoded = reader.postings([key for key, _ in straddling])
        for key, term in straddling:
            df[term] += int((decoded[key].ids <= max_document).sum())
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
    return _Prepared(infos, df, deleted, scored, tail_conversations, reader)


def _ranked(
    query: ParsedQuery,
    found: _Prepared,
    stats: bm25.ScopeStats,
    params: bm25.Bm25Params,
    limit: int,
    max_document: int | None,
) -> list[tuple[int, float]]:
    """The top `limit` of what `_prepare` found: the tail seeds the top k, tombstoned documents are skipped."""
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
        max_document=max_document,
    )


class BlockSearch:
    """One tenant-wide search from blocks: the blocks' metadata, the tombstones and the scored tail are read once,
    for the exact count and for every ranking window a page asks for."""

    def __init__(self, query: ParsedQuery, scope: Scope, stats: bm25.ScopeStats, params: bm25.Bm25Params) -> None:
        self.query, self.stats, self.params = query, stats, params
        self.max_document = scope.max_document_id
        self.found = _prepare(query, scope, stats, params) if stats.documents else None
        self.every: list[tuple[int, float]] | None = None
        """The whole ranking, when counting had to score every match (phrases, exclusions)."""
        self.last: list[tuple[int, float]] = []
        """The last ranking window answered: matches all, whose conversations a lower-bound count names."""

    def rank(self, limit: int) -> list[tuple[int, float]]:
        """The top `limit` (document id, score) of the scope, best first, ties by id."""
        if self.found is None:
            return []
        if self.every is not None:
            return self.every[:limit]
        self.last = _ranked(self.query, self.found, self.stats, self.params, limit, self.max_document)
        return self.last

    def past_bound(self) -> bool:
        """Whether more than `count_bound()` documents match, known from df alone (no block read): some word of
        the query is in more documents than that, even less every document an exclusion could take away."""
        found, query = self.found, self.query
        if found is None or not all(isinstance(clause, Term) for clause in query.should):
            return False
        largest = max((found.df[clause.term] for clause in query.should if isinstance(clause, Term)), default=0)
        removable = sum(min(found.df[term] for term in topk.clause_terms(clause)) for clause in query.must_not)
        return largest - removable > count_bound()

    def lower_bound(self) -> MatchCounts:
        """Counts past the bound: the bound, and the conversations of the matches read so far (those ranked, and
        for words alone every document of the blocks the ranking decoded), with nothing more read."""
        found = self.found
        if found is None:  # not past the bound: nothing matched at all
            return MatchCounts()
        ranked = [key for key, _ in self.last]
        conversations = {found.tail_conversations[key] for key in ranked if key in found.tail_conversations}
        if self.query.must_not:
            conversations |= found.reader.conversations_of([k for k in ranked if k not in found.tail_conversations])
        else:
            # Every ranked document of the blocks is a live one of the decoded blocks: these hold its conversation.
            conversations |= found.reader.decoded_conversations(found.deleted, self.max_document)
            conversations |= set(found.tail_conversations.values())
        bound = count_bound()
        return MatchCounts(bound, max(1, min(len(conversations), bound)), lower_bound=True)

    def count(self) -> MatchCounts:
        """Matching messages and the conversations they are in, exactly, from every block of the query's words.

        Words only: the matches are the union of the words' documents, so no score is computed; the ids and
        conversations of every block are read (for a word in 10 % of a 340,000-message tenant, about 270 blocks)
        and counted with numpy, and the ranking then reuses the decoded blocks. With a phrase or an exclusion
        every block of the clauses is scored without pruning (phrases from positions), which gives the whole
        ranking as well: it is kept, so that no page needs ranking again.
        """
        found, query, max_document = self.found, self.query, self.max_document
        if found is None:
            self.every = []
            return MatchCounts()
        if not query.must_not and all(isinstance(clause, Term) for clause in query.should):
            wanted = {clause.term for clause in query.should if isinstance(clause, Term)}
            decoded = found.reader.postings([info.key for info in found.infos if info.term in wanted])
            ids = np.concatenate([np.zeros(0, np.int64), *(block.ids for block in decoded.values())])
            owners = np.concatenate(
                [np.zeros(0, np.int64), *(b.conversations for b in decoded.values() if b.conversations is not None)]
            )
            keep = ~np.isin(ids, np.fromiter(found.deleted, dtype=np.int64, count=len(found.deleted)))
            if max_document is not None:
                keep &= ids <= max_document
            ids, first = np.unique(ids[keep], return_index=True)
            conversations = set(owners[keep][first].tolist()) | set(found.tail_conversations.values())
            return MatchCounts(len(ids) + len(found.tail_conversations), len(conversations))
        # Every match is scored: at once (topk.rank_all), not block by block as a pruning top k visits them.
        every = self.every = topk.rank_all(
            query,
            found.infos,
            found.df,
            self.stats,
            self.params,
            found.reader,
            seeds=found.tail,
            skip=found.deleted,
            max_document=max_document,
        )
        tail = [key for key, _ in every if key in found.tail_conversations]
        folded = [key for key, _ in every if key not in found.tail_conversations]
        conversations = found.reader.conversations_of(folded) | {found.tail_conversations[key] for key in tail}
        return MatchCounts(len(every), len(conversations))


class BlockRanker:
    """Tenant-wide words and phrases, from the posting blocks: one read of the blocks' metadata serves the count
    and the ranking, so the count is taken first (it may decode every block, or rank everything, that the
    ranking then reuses)."""

    @staticmethod
    def rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
        return settings.SESSIONDESK_SEARCH_BLOCKS and blocks_rankable(query, scope, filters)

    def __init__(self, search: RankInput) -> None:
        self.blocks = BlockSearch(search.query, search.scope, search.stats, search.params)
        # Past the count bound nothing is counted: the ranking reads only the blocks it must.
        self.counts = None if self.blocks.past_bound() else self.blocks.count()

    def rank(self, window: int) -> tuple[Ranked, int | None]:
        return self.blocks.rank(window), None

    def count(self, ranked_total: int | None) -> MatchCounts:
        return self.counts if self.counts is not None else self.blocks.lower_bound()
