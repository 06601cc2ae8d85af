"""How many messages, and in how many conversations, match a query in a scope: exact, apart from the ranking.

Ranking may prune (it only needs the top k); counting may not. A document matches when it is in the scope, the
caller may see it (filters), it holds at least one positive clause (a word, a phrase as consecutive terms, a
term starting with a prefix) and none of the excluded ones: exactly the documents a full ranking scores above
zero (every idf is positive). One SQL statement over the candidates the full-text index names: for words and
prefixes those candidates are the matches; with a phrase or an exclusion each clause is tested as a substring of
the terms with doubled spaces (as search_app.ranking.sql_ranking counts them); a phrase of CJK characters
(whose stored stream interleaves bigrams) is decided in Python over the same candidates by search_app.bm25.
Tenant-wide queries that the block ranker answers are counted from the blocks instead
(search_app.ranking.block_ranking).

Counts cost what the page costs: past `count_bound()` matches (10,000) counting stops, and the answer says its
numbers are lower bounds (`MatchCounts.lower_bound`): `count_bound() + 1` candidates are read at most, so a common
word costs no more to count than a rare one. Paging never depends on the total (search_app.service).
"""

from django.conf import settings
from django.db import connection

from search_app.backends import backend_for_connection
from search_app.backends.base import (
    DOCS,
    Filters,
    Lookup,
    Scope,
    SearchBackend,
    SqlParams,
    scope_sql,
    visible_sql,
)
from search_app.bm25 import Document, excluded
from search_app.query import Clause, ParsedQuery, Phrase, Prefix, Term
from search_app.ranking.protocol import MatchCounts, RankInput
from search_app.tokenize import is_cjk

_PADDED = "'  ' || replace(terms, ' ', '  ') || '  '"


def count_bound() -> int:
    """Matches counted exactly; past this many the counts are lower bounds (`SESSIONDESK_SEARCH_COUNT_BOUND`)."""
    return int(settings.SESSIONDESK_SEARCH_COUNT_BOUND)


def bounded(messages: int, conversations: int) -> MatchCounts:
    """Counts taken over at most `count_bound() + 1` matches: past the bound, the bound itself, said to be one."""
    bound = count_bound()
    if messages > bound:
        return MatchCounts(bound, min(conversations, bound), lower_bound=True)
    return MatchCounts(messages, conversations)


def _cjk_phrase(clause: Clause) -> bool:
    return isinstance(clause, Phrase) and any(is_cjk(term[0]) for term in clause.terms)


def _like(clause: Clause) -> str:
    # Terms are letters and digits only (search_app.tokenize), so no LIKE wildcard can come from a query.
    if isinstance(clause, Term):
        return f"%  {clause.term}  %"
    if isinstance(clause, Prefix):
        return f"%  {clause.prefix}%"
    return "%  " + "  ".join(clause.terms) + "  %"


def count_matches(backend: SearchBackend, scope: Scope, query: ParsedQuery, filters: Filters) -> MatchCounts:
    """The number of matching messages and of distinct conversations they are in: exact up to `count_bound()`."""
    where, params = scope_sql(scope)
    condition, condition_params = backend.candidate_sql(scope, Lookup.of(query.should))
    visible, visible_params = visible_sql(filters)
    base = f"FROM {DOCS} WHERE {where}{f' AND {condition}' if condition else ''} AND {visible}"
    base_params = [*params, *condition_params, *visible_params]
    if any(_cjk_phrase(clause) for clause in query.should + query.must_not):
        return _count_in_python(base, base_params, query)
    limit = count_bound() + 1
    if not query.must_not and not any(isinstance(clause, Phrase) for clause in query.should):
        # Words and prefixes only: the full-text index names exactly the documents holding one (both backends match
        # whole terms and term prefixes), so every candidate matches and no document's terms need reading.
        sql = f"SELECT count(*), count(DISTINCT conversation_id) FROM (SELECT conversation_id {base} LIMIT %s) AS c"  # noqa: S608 - constant tables, bound values
        with connection.cursor() as cursor:
            cursor.execute(sql, [*base_params, limit])
            messages, conversations = cursor.fetchone()
        return bounded(int(messages or 0), int(conversations or 0))
    tests = " OR ".join(["s LIKE %s"] * len(query.should))
    like_params: list[str] = [_like(clause) for clause in query.should]
    condition = f"({tests})"
    if query.must_not:
        condition += f" AND NOT ({' OR '.join(['s LIKE %s'] * len(query.must_not))})"
        like_params += [_like(clause) for clause in query.must_not]
    padded = f"SELECT conversation_id, {_PADDED} AS s {base}"
    sql = (
        "SELECT count(*), count(DISTINCT conversation_id) FROM "  # noqa: S608 - constant tables, bound values
        f"(SELECT conversation_id FROM ({padded}) AS c WHERE {condition} LIMIT %s) AS d"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*base_params, *like_params, limit])
        messages, conversations = cursor.fetchone()
    return bounded(int(messages or 0), int(conversations or 0))


def _count_in_python(base: str, params: SqlParams, query: ParsedQuery) -> MatchCounts:
    conversations: set[int] = set()
    messages = 0
    limit = count_bound() + 1
    positive = ParsedQuery(should=(), must_not=query.should)  # `excluded` tests any clause's presence
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, conversation_id, terms {base}", params)
        while messages < limit and (rows := cursor.fetchmany(1000)):
            for key, conversation_id, terms in rows:
                document = Document(key, terms)
                if excluded(positive, document) and not excluded(query, document):
                    messages += 1
                    conversations.add(conversation_id)
                    if messages >= limit:
                        break
    return bounded(messages, len(conversations))


class CountedAfterRanking:
    """For the rankers that read the candidates the full-text index names (in SQL or in Python): the count comes
    after the ranking, from the ranker's own count for one conversation or run, else from `count_matches`."""

    def __init__(self, search: RankInput) -> None:
        self.search = search
        self.backend = backend_for_connection()

    def count(self, ranked_total: int | None) -> MatchCounts:
        search = self.search
        if ranked_total is not None and (search.scope.conversation_pk or search.scope.run_pk):
            # One conversation: the ranker counted its matches on the way (a count query would read them again).
            return MatchCounts(ranked_total, 1 if ranked_total else 0)
        return count_matches(self.backend, search.scope, search.query, search.filters)
