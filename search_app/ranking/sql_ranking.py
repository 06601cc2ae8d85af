"""Exact BM25 computed inside the database, for both backends: only the top hits travel to Python.

The same formula as search_app.bm25, in SQL. A document's terms are stored joined by single spaces; doubling
the spaces makes every term (and every phrase) occurrence a distinct, non-overlapping substring ` term `, so
`(length(s) - length(replace(s, ' term ', ''))) / length(' term ')` is the term frequency, exactly. Document
frequencies are counted over every candidate of the scope (before filters and exclusions, as statistics must
be), idf and the length norm use float8 arithmetic, ties break by document id as in Python.

Used for queries of words and phrases of non-CJK words; prefixes (whose expansions are only known from the
documents) and CJK phrases (whose adjacency the bigram-interleaved stream does not show as a substring) are
ranked by search_app.bm25 over the candidates instead. Both are exact; the conformance tests run both.
"""

from django.conf import settings
from django.db import connection

from search_app.backends import backend_for_connection
from search_app.backends.base import DOCS, Filters, Lookup, Scope, SqlParams, scope_sql, visible_sql
from search_app.bm25 import Bm25Params, ScopeStats
from search_app.query import ParsedQuery, Phrase, Prefix, Term
from search_app.ranking.counting import CountedAfterRanking
from search_app.ranking.protocol import Ranked
from search_app.tokenize import is_cjk

_F = "CAST(%s AS DOUBLE PRECISION)"


def sql_rankable(query: ParsedQuery) -> bool:
    clauses = query.should + query.must_not
    if any(isinstance(clause, Prefix) for clause in query.should):
        return False
    return not any(isinstance(clause, Phrase) and any(is_cjk(term[0]) for term in clause.terms) for clause in clauses)


def _pattern(terms: tuple[str, ...]) -> str:
    return " " + "  ".join(terms) + " "


def _count(pattern: str, params: SqlParams) -> str:
    params.extend([pattern, len(pattern)])
    return "((length(s) - length(replace(s, %s, ''))) / %s)"


def rank_in_database(
    query: ParsedQuery,
    scope_sql: str,
    scope_params: SqlParams,
    candidate_sql: str,
    candidate_params: SqlParams,
    stats: ScopeStats,
    params: Bm25Params,
    filters: Filters,
    limit: int,
) -> tuple[Ranked, int]:
    """The top `limit` (document id, score) of visible, non-excluded matches, and how many matched in all."""
    if stats.documents == 0:
        return [], 0
    terms: dict[str, int] = {}
    for clause in query.should:
        assert not isinstance(clause, Prefix)  # noqa: S101 - sql_rankable admits no prefix among the positive clauses
        for term in (clause.term,) if isinstance(clause, Term) else clause.terms:
            terms.setdefault(term, len(terms))

    sql_params: SqlParams = []
    columns = [f"{_count(_pattern((term,)), sql_params)} AS tf_{i}" for term, i in terms.items()]
    phrases = [clause for clause in query.should if isinstance(clause, Phrase)]
    columns += [f"{_count(_pattern(p.terms), sql_params)} AS pf_{j}" for j, p in enumerate(phrases)]

    exclusions = []
    for clause in query.must_not:
        if isinstance(clause, Prefix):
            sql_params.append(f"% {clause.prefix}%")
            exclusions.append("s LIKE %s")
        else:
            pattern = _pattern((clause.term,) if isinstance(clause, Term) else clause.terms)
            sql_params.append(f"%{pattern}%")
            exclusions.append("s LIKE %s")
    columns.append(f"({' OR '.join(exclusions)}) AS excluded" if exclusions else "0 = 1 AS excluded")

    visible, visible_params = visible_sql(filters, "x")
    columns.append(f"{visible} AS visible")
    sql_params.extend(visible_params)
    sql_params.extend([float(params.k1), float(params.b), float(params.b), float(stats.average_length)])
    # Django binds parameters client-side, so a float arrives as a numeric literal: cast, or PostgreSQL does
    # every row's arithmetic in numeric, several times slower than float8.
    columns.append(f"{_F} * (1.0 - {_F} + {_F} * length / {_F}) AS norm")

    dfs = ", ".join(f"count(*) FILTER (WHERE tf_{i} > 0) AS df_{i}" for i in terms.values())
    n = float(stats.documents)
    # float8 throughout: PostgreSQL's numeric arithmetic per row would be several times slower.
    idfs = ", ".join(
        f"ln(1.0 + (CAST({n!r} AS DOUBLE PRECISION) - df_{i} + 0.5) / (df_{i} + 0.5)) AS idf_{i}"
        for i in terms.values()
    )
    parts = [
        f"CASE WHEN tf_{terms[c.term]} > 0 THEN idf_{terms[c.term]} * tf_{terms[c.term]} / "
        f"(tf_{terms[c.term]} + norm) ELSE 0.0 END"
        for c in query.should
        if isinstance(c, Term)
    ]
    for j, phrase in enumerate(phrases):
        weight = " + ".join(f"idf_{terms[t]}" for t in phrase.terms)
        parts.append(f"CASE WHEN pf_{j} > 0 THEN ({weight}) * pf_{j} / (pf_{j} + norm) ELSE 0.0 END")

    sql = f"""
        WITH c AS MATERIALIZED (
            SELECT id, {", ".join(columns)}
            FROM (
                SELECT id, tenant_id, entry_id, length, role, agent_name, timestamp,
                       '  ' || replace(terms, ' ', '  ') || '  ' AS s
                FROM {DOCS} WHERE {scope_sql}{f" AND {candidate_sql}" if candidate_sql else ""}
            ) AS x
        ),
        w AS MATERIALIZED (SELECT {idfs} FROM (SELECT {dfs} FROM c) AS d)
        SELECT id, score, count(*) OVER () AS total FROM (
            SELECT c.id, ({" + ".join(parts)}) AS score FROM c CROSS JOIN w
            WHERE c.visible AND NOT c.excluded
        ) AS r
        WHERE score > 0
        ORDER BY score DESC, id
        LIMIT %s
    """  # noqa: S608 - constant tables, bound values
    with connection.cursor() as cursor:
        cursor.execute(sql, [*sql_params, *scope_params, *candidate_params, limit])
        rows = cursor.fetchall()
    total = rows[0][2] if rows else 0
    return [(key, float(score)) for key, score, _ in rows], total


class SqlRanker(CountedAfterRanking):
    """Words and phrases (not CJK phrases), with any filters: BM25 in SQL over the candidates, where the backend
    is faster at it (`ranks_in_database`) unless SESSIONDESK_SEARCH_SQL_RANKING says otherwise."""

    @staticmethod
    def rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
        in_database = settings.SESSIONDESK_SEARCH_SQL_RANKING
        if in_database is None:
            in_database = backend_for_connection().ranks_in_database
        return bool(in_database) and sql_rankable(query)

    def rank(self, window: int) -> tuple[Ranked, int | None]:
        search = self.search
        return rank_in_database(
            search.query,
            *scope_sql(search.scope),
            *self.backend.candidate_sql(search.scope, Lookup.of(search.query.should)),
            search.stats,
            search.params,
            search.filters,
            window,
        )
