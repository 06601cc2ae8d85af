"""PostgreSQL, tenant-wide word queries: exact BM25 from the postings table (migration 0004) alone.

For queries of plain words (optionally excluding words) without role, agent or time filters, over one or more
whole tenants: df is a count of (tenant, term) postings, and each posting already holds the document's tf and
length, so the score is an aggregate over index-only scans; the heap is never read. Same formula, same float8
arithmetic, same tie order (document id) as the other rankers; anything else goes to them.
"""

from django.db import connection

from search_app.backends.base import Filters, Scope
from search_app.bm25 import Bm25Params, ScopeStats, idf
from search_app.query import ParsedQuery, Term

POSTINGS = "search_app_posting"
_F = "CAST(%s AS DOUBLE PRECISION)"


def postings_rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
    return (
        not scope.small
        and filters == Filters()
        and all(isinstance(clause, Term) for clause in query.should + query.must_not)
    )


def rank_with_postings(
    query: ParsedQuery, scope: Scope, stats: ScopeStats, params: Bm25Params, limit: int
) -> tuple[list[tuple[int, float]], int]:
    """The top `limit` (document id, score) and the number of matching documents."""
    terms = [clause.term for clause in query.should]
    tenants = list(scope.tenant_ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT term, count(*) FROM {POSTINGS} WHERE tenant_id = ANY(%s) AND term = ANY(%s) GROUP BY term",
            [tenants, terms],
        )
        df = dict(cursor.fetchall())
        weights = {term: idf(df[term], stats.documents) for term in terms if df.get(term)}
        if not weights:
            return [], 0
        values = ", ".join([f"(CAST(%s AS TEXT), {_F})"] * len(weights))
        # In the order the placeholders appear: the length norm, the (term, idf) rows, the WHERE clause.
        sql_params: list = [float(params.k1), float(params.b), float(params.b), float(stats.average_length)]
        sql_params += [item for pair in weights.items() for item in pair]
        sql_params += [tenants, list(weights)]
        excluded = ""
        if query.must_not:
            excluded = (
                f"AND NOT EXISTS (SELECT 1 FROM {POSTINGS} x WHERE x.tenant_id = p.tenant_id "
                "AND x.term = ANY(%s) AND x.document_id = p.document_id)"
            )
            sql_params.append([clause.term for clause in query.must_not])
        cursor.execute(
            f"""
            SELECT document_id, score, count(*) OVER () FROM (
                SELECT p.document_id,
                       sum(w.idf * p.tf / (p.tf + {_F} * (1.0 - {_F} + {_F} * p.length / {_F}))) AS score
                FROM {POSTINGS} p JOIN (VALUES {values}) AS w(term, idf) ON w.term = p.term
                WHERE p.tenant_id = ANY(%s) AND p.term = ANY(%s) {excluded}
                GROUP BY p.document_id
            ) AS s
            ORDER BY score DESC, document_id
            LIMIT %s
            """,
            [*sql_params, limit],
        )
        rows = cursor.fetchall()
    total = rows[0][2] if rows else 0
    return [(key, float(score)) for key, score, _ in rows], total
