"""Any query, with any filters: search_app.bm25 over every candidate the full-text index names, fetched with its
terms, length and visibility. The ranker of last resort (prefixes, CJK phrases), and on SQLite the fastest for
the queries the blocks do not answer (bench/search.py)."""

from django.db import connection

from search_app import bm25
from search_app.backends.base import (
    DOCS,
    Filters,
    Lookup,
    Scope,
    SearchBackend,
    scope_sql,
    visible_sql,
)
from search_app.bm25 import Document
from search_app.query import ParsedQuery
from search_app.ranking.counting import CountedAfterRanking
from search_app.ranking.protocol import Ranked


def fetch_candidates(backend: SearchBackend, scope: Scope, lookup: Lookup, filters: Filters) -> list[Document]:
    """Every candidate of the scope with its terms, length and visibility, for the Python ranker."""
    where, params = scope_sql(scope)
    condition, condition_params = backend.candidate_sql(scope, lookup)
    visible, visible_params = visible_sql(filters)
    sql = f"SELECT id, length, {visible}, terms FROM {DOCS} WHERE {where}"  # noqa: S608 - constant tables, bound values
    if condition:
        sql += f" AND {condition}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [*visible_params, *params, *condition_params])
        return [Document(key, terms, bool(shown), length) for key, length, shown, terms in cursor.fetchall()]


class CandidateRanker(CountedAfterRanking):
    @staticmethod
    def rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
        return True

    def rank(self, window: int) -> tuple[Ranked, int | None]:
        search = self.search
        candidates = fetch_candidates(self.backend, search.scope, Lookup.of(search.query.should), search.filters)
        ranked = bm25.rank(search.query, candidates, search.stats, search.params)
        # Every match is ranked: in one conversation or run that is its count too (no count query).
        return ranked[:window], len(ranked) if search.scope.small else None
