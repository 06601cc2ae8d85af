"""PostgreSQL, queries of words and phrases: exact BM25 from the postings table (migration 0004).

For queries of words and (non-CJK) phrases, optionally excluding words, without role, agent or time filters,
over one or more whole tenants or one conversation (the postings key is tenant, term, conversation, document).
df is a count of postings; each posting already holds the document's tf and length, so a word's contribution
is an aggregate over index-only scans and the heap is never read. A phrase reads from the heap only the
documents holding all of its words (found in the postings), to count the phrase in their terms. Same formula,
float8 arithmetic and tie order (document id) as the other rankers; anything else goes to them.
"""

from django.db import connection

from search_app.backends.base import DOCS, Filters, Scope
from search_app.bm25 import Bm25Params, ScopeStats, idf
from search_app.query import ParsedQuery, Phrase, Term
from search_app.tokenize import is_cjk

POSTINGS = "search_app_posting"
_F = "CAST(%s AS DOUBLE PRECISION)"
_NORM = f"{_F} * (1.0 - {_F} + {_F} * {{length}} / {_F})"


def postings_rankable(query: ParsedQuery, scope: Scope, filters: Filters) -> bool:
    return (
        scope.run_pk is None
        and not scope.exclude_pending
        and scope.max_document_id is None
        and filters == Filters()
        and all(isinstance(clause, Term) for clause in query.must_not)
        and all(
            isinstance(clause, Term)
            or (isinstance(clause, Phrase) and not any(is_cjk(term[0]) for term in clause.terms))
            for clause in query.should
        )
    )


def rank_with_postings(
    query: ParsedQuery, scope: Scope, stats: ScopeStats, params: Bm25Params, limit: int
) -> tuple[list[tuple[int, float]], int]:
    """The top `limit` (document id, score) and the number of matching documents."""
    tenants = list(scope.tenant_ids)
    # Every postings read is narrowed the same way: tenants, then (optionally) the conversation.
    where = "tenant_id = ANY(%s)"
    where_params: list[list[int] | int] = [tenants]
    if scope.conversation_pk is not None:
        where, where_params = where + " AND conversation_id = %s", [tenants, scope.conversation_pk]
    where_p = where.replace("tenant_id", "p.tenant_id").replace("conversation_id", "p.conversation_id")
    words = [clause.term for clause in query.should if isinstance(clause, Term)]
    phrases = [clause for clause in query.should if isinstance(clause, Phrase)]
    every_term = list(dict.fromkeys(words + [term for phrase in phrases for term in phrase.terms]))
    norm_params = [float(params.k1), float(params.b), float(params.b), float(stats.average_length)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT term, count(*) FROM {POSTINGS} WHERE {where} AND term = ANY(%s) GROUP BY term",
            [*where_params, every_term],
        )
        df = dict(cursor.fetchall())
        weights = {term: idf(df[term], stats.documents) for term in every_term if df.get(term)}

        parts: list[str] = []
        sql_params: list = []
        present = [term for term in words if term in weights]
        if present:
            values = ", ".join([f"(CAST(%s AS TEXT), {_F})"] * len(present))
            parts.append(
                f"SELECT p.document_id, w.idf * p.tf / (p.tf + {_NORM.format(length='p.length')}) AS score "
                f"FROM {POSTINGS} p JOIN (VALUES {values}) AS w(term, idf) ON w.term = p.term "
                f"WHERE {where_p} AND p.term = ANY(%s)"
            )
            sql_params += [*norm_params, *[x for term in present for x in (term, weights[term])], *where_params]
            sql_params.append(present)
        for phrase in phrases:
            if not all(term in weights for term in phrase.terms):
                continue  # a word of the phrase occurs nowhere in scope: neither does the phrase
            pattern = " " + "  ".join(phrase.terms) + " "
            distinct = list(dict.fromkeys(phrase.terms))
            parts.append(
                f"SELECT id, {_F} * pf / (pf + {_NORM.format(length='length')}) AS score FROM ("
                "SELECT id, length, (length(s) - length(replace(s, %s, ''))) / %s AS pf FROM ("
                f"SELECT id, length, '  ' || replace(terms, ' ', '  ') || '  ' AS s FROM {DOCS} WHERE id IN ("
                f"SELECT document_id FROM {POSTINGS} WHERE {where} AND term = ANY(%s) "
                "GROUP BY document_id HAVING count(*) = %s)) AS d) AS x WHERE pf > 0"
            )
            weight = sum(weights[term] for term in phrase.terms)
            sql_params += [weight, *norm_params, pattern, len(pattern), *where_params, distinct, len(distinct)]
        if not parts:
            return [], 0

        excluded = ""
        if query.must_not:
            unwanted = [clause.term for clause in query.must_not if isinstance(clause, Term)]
            assert len(unwanted) == len(query.must_not)  # postings_rankable admits only words after "-"
            excluded = (
                f"WHERE c.document_id NOT IN (SELECT document_id FROM {POSTINGS} WHERE {where} AND term = ANY(%s))"
            )
            sql_params += [*where_params, unwanted]
        cursor.execute(
            f"""
            SELECT document_id, score, count(*) OVER () FROM (
                SELECT c.document_id, sum(c.score) AS score
                FROM ({" UNION ALL ".join(parts)}) AS c(document_id, score)
                {excluded}
                GROUP BY c.document_id
            ) AS s
            ORDER BY score DESC, document_id
            LIMIT %s
            """,
            [*sql_params, limit],
        )
        rows = cursor.fetchall()
    total = rows[0][2] if rows else 0
    return [(key, float(score)) for key, score, _ in rows], total
