"""Conversation and run scope from posting blocks: the part's filter applied inside the block ranker.

Blocks are tenant-wide. A conversation's documents lie in a range of ids its statistics row keeps
(`ConversationIndex.first_document`/`last_document`, a range covering every one of them); a run's are read by
their own index. One statement reads everything the ranking needs: every block of the query's terms overlapping
that range (postings, their conversations, positions for phrases), the part's unfolded documents holding a query
word, and the tombstones in the range. The documents of other conversations in those blocks are left out by the
conversation ids each block keeps (or, for a run, by its documents' ids); df is counted over the part's own
documents, so the statistics are the part's exactly as the other rankers take them, and every match is scored
(search_app.topk.rank_within): the ranking is the count.

The range is what this costs: a conversation written while many others of its tenant were (ids far apart) has a
wide range, whose blocks hold mostly other conversations' documents; past `SPREAD` ids per document the other
rankers take it (they read the conversation's candidates by its own index).

`conversation_facts` is the fixed work of a conversation search in one statement: the conversation itself (found by
its id), its statistics, its range, whether it is pending or has unfolded documents, and the tenants' newest
document.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection

from search_app import bm25, topk
from search_app.backends.base import DOCS, DocumentSpan, Filters, Scope, SqlParams
from search_app.blocks import DecodedBlock, decode, decode_frontier
from search_app.identify import id_candidate, identified, named_statement
from search_app.index import IndexState
from search_app.models import ConversationIndex
from search_app.query import ParsedQuery, Phrase
from search_app.ranking.block_ranking import BLOCKS, TAIL, TOMBSTONES, plain_clauses
from search_app.ranking.protocol import MatchCounts, Ranked, RankInput
from search_app.results import Identified
from sessions_app.models import Conversation, Tenant

CONVERSATIONS = ConversationIndex._meta.db_table
CONVERSATION_ROWS = Conversation._meta.db_table
SPREAD = 16
"""Ids per document of a conversation's range past which it is not ranked from blocks (plus `SLACK`)."""
SLACK = 2048


@dataclass(frozen=True, slots=True)
class ConversationFacts:
    conversation_pk: int
    state: IndexState
    newest: int
    stats: bm25.ScopeStats
    span: DocumentSpan | None
    identified: list[Identified] | None = None
    """What the query names by its id in the conversation, when asked for (None: not asked)."""


_FACTS = "facts"


def conversation_facts(
    tenant_ids: Sequence[int],
    conversation_pk: int | None,
    external_id: str | None = None,
    *,
    query: str | None = None,
    tenants: Sequence[Tenant] = (),
) -> ConversationFacts | None:
    """One statement, each part by its own index: the conversation's statistics row (documents, length, pending,
    range), whether one of its documents is unfolded (the tenants' tail joined to the documents by key), the
    tenants' newest document (search_app.service's point in time) and, given the `query` (a first page) and the
    `tenants` searched, the conversations, runs and tool calls of the conversation whose id it is
    (search_app.identify). A pending conversation is out of the scope: its statistics are then none, as
    `scope_statistics` takes them.

    Given `external_id` instead of `conversation_pk` (conversation scope, a caller reading its whole tenant:
    `tenant_ids` is that one tenant), the same statement finds the conversation as search_app.scope.find_target
    does (its lowest key of that id); None when the tenant has no such conversation.
    """
    marks = ", ".join(["%s"] * len(tenant_ids))
    if conversation_pk is not None:
        source, source_params = "SELECT CAST(%s AS BIGINT) AS id", SqlParams([conversation_pk])
    else:
        source = (
            f"SELECT c.id FROM {CONVERSATION_ROWS} c "  # noqa: S608 - constant tables, bound values
            f"WHERE c.tenant_id IN ({marks}) AND c.external_id = %s ORDER BY c.id LIMIT 1"
        )
        source_params = [*tenant_ids, external_id]
    sql = (
        f"SELECT '{_FACTS}' AS kind, ci.tenant_id, '' AS external_id, '' AS run, k.id AS k, ci.documents, "  # noqa: S608 - constant tables, bound values
        "ci.total_length, CASE WHEN ci.pending THEN 1 ELSE 0 END AS pending, ci.first_document, ci.last_document, "
        f"(SELECT max(n.id) FROM {DOCS} n WHERE n.tenant_id IN ({marks})) AS newest, "
        f"CASE WHEN EXISTS (SELECT 1 FROM {TAIL} t JOIN {DOCS} d ON d.tenant_id = t.tenant_id AND d.id = t.document_id "
        f"WHERE t.tenant_id IN ({marks}) AND d.tenant_id IN ({marks}) AND d.conversation_id = k.id) THEN 1 ELSE 0 END "
        f"AS unfolded FROM ({source}) AS k LEFT JOIN {CONVERSATIONS} ci ON ci.tenant_id IN ({marks}) "
        "AND ci.conversation_id = k.id"
    )
    params: SqlParams = [*tenant_ids, *tenant_ids, *tenant_ids, *source_params, *tenant_ids]
    candidate = id_candidate(query) if query is not None else None
    if candidate is not None:
        # The ids the query names within the conversation (found by its id: the same subquery as above, again).
        conversation = None if conversation_pk is not None else (f"({source})", [*source_params])
        named, named_params = named_statement(candidate, tuple(tenant_ids), conversation_pk, None, conversation)
        sql += f" UNION ALL SELECT named.*, {', '.join(['NULL'] * 7)} FROM ({named}) AS named"  # noqa: S608 - constant tables, bound values
        params += named_params
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    facts = next((row for row in rows if row[0] == _FACTS), None)
    if facts is None:
        return None
    _, tenant_id, _, _, key, documents, total_length, pending, first, last, newest, unfolded = facts
    pending = bool(pending)
    stats = bm25.ScopeStats(0, 0) if pending or tenant_id is None else bm25.ScopeStats(documents, total_length)
    span = None
    if tenant_id is not None and not pending and first is not None and last is not None:
        span = DocumentSpan(tenant_id, first, last, documents)
    found = None
    if query is not None:
        names = [(str(r[0]), int(r[1]), str(r[2]), str(r[3]), int(r[4])) for r in rows if r[0] != _FACTS]
        found = identified(candidate, names, tenants) if candidate is not None else []
    return ConversationFacts(key, IndexState(pending, bool(unfolded)), newest or 0, stats, span, found)


def _narrow(span: DocumentSpan | None) -> bool:
    return span is not None and span.last - span.first + 1 <= SPREAD * span.documents + SLACK


def scoped_rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
    one_part = (scope.conversation_pk is not None and scope.run_pk is None and _narrow(scope.span)) or (
        scope.run_pk is not None
    )
    return one_part and not scope.exclude_pending and filters == Filters() and plain_clauses(query)


def _null_blob() -> str:
    return "CAST(NULL AS bytea)" if connection.vendor == "postgresql" else "NULL"


def _read(
    query: ParsedQuery,
    tenant_id: int,
    first: int,
    last: int,
    part: tuple[str, int],
    max_document: int | None,
) -> tuple[list[tuple[topk.BlockInfo, DecodedBlock]], dict[int, bytes], list[bm25.Document], set[int]]:
    """Blocks of the query's terms overlapping [first, last], the part's unfolded documents holding a query word,
    the tombstones in the range: one statement. Blocks of a term never overlap, so those overlapping the range
    are the ones starting in it and the last one starting before it (kept if it reaches into it)."""
    every_term = list(dict.fromkeys(t for c in query.should + query.must_not for t in topk.clause_terms(c)))
    positive = list(dict.fromkeys(t for c in query.should for t in topk.clause_terms(c)))
    with_positions = any(isinstance(c, Phrase) for c in query.should + query.must_not)
    top = last if max_document is None else min(last, max_document)
    blob = _null_blob()
    columns = (
        f"id, first_document, last_document, count, term, frontier, postings, conversations, "
        f"{'positions' if with_positions else blob}"
    )
    marks = ", ".join(["%s"] * len(every_term))
    arms = [
        f"SELECT 0 AS kind, {columns} FROM {BLOCKS} WHERE tenant_id = %s AND term IN ({marks}) "  # noqa: S608 - constant tables, bound values
        "AND first_document > %s AND first_document <= %s"
    ]
    params: SqlParams = [tenant_id, *every_term, first, top]
    for term in every_term:
        arms.append(
            f"SELECT * FROM (SELECT 0 AS kind, {columns} FROM {BLOCKS} WHERE tenant_id = %s AND term = %s "  # noqa: S608 - constant tables, bound values
            "AND first_document <= %s ORDER BY first_document DESC LIMIT 1) AS b"
        )
        params += [tenant_id, term, first]
    column, value = part
    holds = " OR ".join(["(' ' || d.terms || ' ') LIKE %s"] * len(positive))
    arms.append(
        f"SELECT 1, d.id, d.length, 0, 0, d.terms, {blob}, {blob}, {blob}, {blob} FROM {TAIL} t "  # noqa: S608 - constant tables, bound values
        f"JOIN {DOCS} d ON d.tenant_id = t.tenant_id AND d.id = t.document_id "
        f"WHERE t.tenant_id = %s AND d.tenant_id = %s AND d.{column} = %s"
        + ("" if max_document is None else " AND t.document_id <= %s")
        + f" AND ({holds})"
    )
    params += [tenant_id, tenant_id, value, *([] if max_document is None else [max_document])]
    params += [f"% {t} %" for t in positive]
    arms.append(
        f"SELECT 2, document_id, 0, 0, 0, '', {blob}, {blob}, {blob}, {blob} FROM {TOMBSTONES} "  # noqa: S608 - constant tables, bound values
        "WHERE tenant_id = %s AND document_id >= %s AND document_id <= %s"
    )
    params += [tenant_id, first, top]
    blocks: list[tuple[topk.BlockInfo, DecodedBlock]] = []
    positions: dict[int, bytes] = {}
    tail: list[bm25.Document] = []
    deleted: set[int] = set()
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(arms), params)
        rows = cursor.fetchall()
    for kind, key, low, high, count, text, frontier, postings, owners, packed in rows:
        if kind == 0:
            if high < first:
                continue  # the last block before the range ends before it
            tfs, lengths = decode_frontier(bytes(frontier))
            info = topk.BlockInfo(key, tenant_id, text, low, high, count, tfs, lengths)
            blocks.append((info, decode(low, count, bytes(postings), bytes(owners))))
            if packed is not None:
                positions[key] = bytes(packed)
        elif kind == 1:
            tail.append(bm25.Document(key, text, length=low))
        else:
            deleted.add(key)
    return blocks, positions, tail, deleted


class ScopedBlockRanker:
    """One conversation or run, from the posting blocks overlapping its documents: every match ranked once, which
    serves every page and the count."""

    @staticmethod
    def rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
        return bool(settings.SESSIONDESK_SEARCH_BLOCKS) and scoped_rankable(query, scope, filters)

    def __init__(self, search: RankInput) -> None:
        self.search = search
        self.every: tuple[np.ndarray, np.ndarray] | None = None

    def _rank_all(self) -> tuple[np.ndarray, np.ndarray]:
        search, scope = self.search, self.search.scope
        nothing = (np.zeros(0, dtype=np.int64), np.zeros(0))
        if search.stats.documents == 0:
            return nothing
        if scope.run_pk is not None:
            members = self._run_documents()
            if members is None:
                return nothing
            tenant_id, ids = members
            first, last = int(ids[0]), int(ids[-1])
            part = ("run_id", scope.run_pk)

            def inside(block: DecodedBlock) -> np.ndarray:
                return np.isin(block.ids, ids)

        else:
            span = scope.span
            assert span is not None and scope.conversation_pk is not None  # noqa: S101 - scoped_rankable says so
            tenant_id, first, last = span.tenant_id, span.first, span.last
            conversation = scope.conversation_pk
            part = ("conversation_id", conversation)

            def inside(block: DecodedBlock) -> np.ndarray:
                assert block.conversations is not None  # noqa: S101 - read with their conversations
                ours: np.ndarray = np.equal(block.conversations, conversation)
                return ours

        blocks, positions, tail, deleted = _read(search.query, tenant_id, first, last, part, scope.max_document_id)
        return topk.rank_within(
            search.query,
            blocks,
            positions,
            inside,
            tail,
            search.stats,
            search.params,
            skip=deleted,
            max_document=scope.max_document_id,
        )

    def _run_documents(self) -> tuple[int, np.ndarray] | None:
        """The run's tenant and its documents' ids, ascending (by the (tenant, run) index)."""
        scope = self.search.scope
        marks = ", ".join(["%s"] * len(scope.tenant_ids))
        upto = "" if scope.max_document_id is None else " AND id <= %s"
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT tenant_id, id FROM {DOCS} WHERE tenant_id IN ({marks}) AND run_id = %s{upto}",  # noqa: S608 - constant tables, bound values
                [*scope.tenant_ids, scope.run_pk, *([] if scope.max_document_id is None else [scope.max_document_id])],
            )
            rows = cursor.fetchall()
        if not rows:
            return None
        return rows[0][0], np.sort(np.array([key for _, key in rows], dtype=np.int64))

    def rank(self, window: int) -> tuple[Ranked, int | None]:
        if self.every is None:
            self.every = self._rank_all()
        keys, scores = self.every
        return list(zip(keys[:window].tolist(), scores[:window].tolist(), strict=True)), len(keys)

    def count(self, ranked_total: int | None) -> MatchCounts:
        if self.every is None:
            self.every = self._rank_all()
        # One conversation: every match was ranked, so the count is exact whatever its size.
        matches = len(self.every[0])
        return MatchCounts(matches, 1 if matches else 0)
