"""Ranking: the exact BM25 rankers behind one seam (search_app.ranking.protocol), and the one choice among them.

- block_ranking: tenant-wide words and phrases, from the posting blocks (top k with block-max pruning);
- scoped_blocks: one conversation's or run's words and phrases, from the blocks overlapping its documents;
- sql_ranking: words and phrases, BM25 computed in SQL (PostgreSQL's choice);
- candidate_ranking: anything, search_app.bm25 over the fetched candidates (SQLite's choice, and the last resort);
- counting: the exact counts for the two candidate rankers.

`choose` takes the first of `RANKERS` that can rank the search; `rank_page` asks it for the window a page needs.
"""

from django.conf import settings
from django.db.models import Count, Sum

from search_app import bm25, paging
from search_app.backends.base import Filters, Scope
from search_app.models import ConversationIndex, SearchDocument
from search_app.query import ParsedQuery
from search_app.ranking.block_ranking import BlockRanker
from search_app.ranking.candidate_ranking import CandidateRanker
from search_app.ranking.protocol import Ranked, Ranker, RankerKind, RankInput
from search_app.ranking.scoped_blocks import ScopedBlockRanker
from search_app.ranking.sql_ranking import SqlRanker

__all__ = ["RANKERS", "Ranked", "Ranker", "RankerKind", "bm25_params", "choose", "rank_page", "scope_statistics"]

RANKERS: tuple[RankerKind, ...] = (BlockRanker, ScopedBlockRanker, SqlRanker, CandidateRanker)
"""In order of preference: the fastest ranker that can rank a search ranks it."""


def bm25_params() -> bm25.Bm25Params:
    return bm25.Bm25Params(k1=settings.SESSIONDESK_SEARCH_BM25_K1, b=settings.SESSIONDESK_SEARCH_BM25_B)


def scope_statistics(scope: Scope) -> bm25.ScopeStats:
    """Documents and their total length in the scope: BM25's N and average length, before any filter."""
    pending = ConversationIndex.objects.filter(tenant_id__in=scope.tenant_ids, pending=True)
    if scope.run_pk is not None:
        documents = SearchDocument.objects.filter(tenant_id__in=scope.tenant_ids, run_id=scope.run_pk)
        if scope.exclude_pending:
            documents = documents.exclude(conversation_id__in=pending.values("conversation_id"))
        row = documents.aggregate(n=Count("id"), length=Sum("length"))
        return bm25.ScopeStats(row["n"] or 0, row["length"] or 0)
    rows = ConversationIndex.objects.filter(tenant_id__in=scope.tenant_ids)
    if scope.exclude_pending:
        rows = rows.filter(pending=False)
    if scope.conversation_pk is not None:
        rows = rows.filter(conversation_id=scope.conversation_pk)
    row = rows.aggregate(n=Sum("documents"), length=Sum("total_length"))
    return bm25.ScopeStats(row["n"] or 0, row["length"] or 0)


def choose(query: ParsedQuery, scope: Scope, stats: bm25.ScopeStats, filters: Filters) -> Ranker:
    """The ranker for this search: the first of `RANKERS` that can rank it (the last ranks anything)."""
    kind = next(kind for kind in RANKERS if kind.rankable(query, scope, filters))
    return kind(RankInput(query, scope, stats, filters, bm25_params()))


def rank_page(ranker: Ranker, limit: int, after: paging.PageCursor | None) -> tuple[Ranked, int | None]:
    """The `limit` results following the cursor's (score, id), or the first `limit`; and the number of matches
    when the ranker counted them (`Ranker.rank`).

    The rankers answer a top k, so a page is cut from the top offset + limit. When messages arrived or left since
    the cursor was made, fewer may follow it there; the window then grows until the page is full or the ranking
    ends, so a page never repeats a result the previous one showed.
    """
    if after is None:
        return ranker.rank(limit)
    window = after.offset + limit
    while True:
        ranked, total = ranker.rank(window)
        following = [(key, score) for key, score in ranked if after.after(score, key)]
        if len(following) >= limit or len(ranked) < window or window >= paging.MAX_DEPTH + limit:
            return following[:limit], total
        window = min(window * 2, paging.MAX_DEPTH + limit)
