"""The fixed work of a whole-tenant search in one statement (conversation scope: ranking.scoped_blocks).

Before ranking, a search of one or more whole tenants needs: the ids the query names (search_app.identify),
whether anything of the tenants is pending or unfolded (`indexing`), the newest document (the point in time every
page sees) and BM25's N and total length over the conversations not pending. Each was a statement of its own, five
round trips before the first block was read; here they are one, every part by its own index as before: the
identification's parts as they are, the rest as scalar subqueries of one row put first.

The statistics are summed over the conversations not pending, which is what `ranking.scope_statistics` sums for a
scope excluding the pending ones, and the same sum when none is pending: so the one statement needs not know
beforehand whether any is.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from search_app import bm25
from search_app.backends.base import DOCS, SqlParams
from search_app.identify import id_candidate, identified, named_statement
from search_app.index import IndexState
from search_app.models import ConversationIndex, UnfoldedDocument
from search_app.results import Identified
from sessions_app.models import Tenant

CONVERSATIONS = ConversationIndex._meta.db_table
TAIL = UnfoldedDocument._meta.db_table
_FACTS = "facts"


@dataclass(frozen=True, slots=True)
class TenantFacts:
    state: IndexState
    newest: int
    """The tenants' newest document: a first page ranks nothing past it."""
    stats: bm25.ScopeStats
    """N and total length over the tenants' conversations not pending."""
    identified: list[Identified]


def tenant_facts(tenants: Sequence[Tenant], query: str | None) -> TenantFacts:
    """The index state, point in time and statistics of these whole tenants, and what `query` names by its id
    (None: a later page, which identifies nothing): one statement, plus one only when the tool-effect ledger knows
    the id (its messages, search_app.identify)."""
    tenant_ids = tuple(tenant.id for tenant in tenants)
    marks = ", ".join(["%s"] * len(tenant_ids))
    live = f"FROM {CONVERSATIONS} ci WHERE ci.tenant_id IN ({marks}) AND NOT ci.pending"
    sql = (
        f"SELECT '{_FACTS}' AS kind, CAST(NULL AS BIGINT) AS tenant_id, '' AS external_id, '' AS run, "  # noqa: S608 - constant tables, bound values
        f"(SELECT max(n.id) FROM {DOCS} n WHERE n.tenant_id IN ({marks})) AS k, "
        f"(SELECT CAST(COALESCE(SUM(ci.documents), 0) AS BIGINT) {live}) AS documents, "
        f"(SELECT CAST(COALESCE(SUM(ci.total_length), 0) AS BIGINT) {live}) AS total_length, "
        f"CASE WHEN EXISTS (SELECT 1 FROM {CONVERSATIONS} c WHERE c.tenant_id IN ({marks}) AND c.pending) "
        "THEN 1 ELSE 0 END AS pending, "
        f"CASE WHEN EXISTS (SELECT 1 FROM {TAIL} t WHERE t.tenant_id IN ({marks})) THEN 1 ELSE 0 END AS unfolded"
    )
    params: SqlParams = [*tenant_ids] * 5
    candidate = id_candidate(query) if query is not None else None
    if candidate is not None:
        named, named_params = named_statement(candidate, tenant_ids, None, None)
        sql += f" UNION ALL SELECT named.*, NULL, NULL, NULL, NULL FROM ({named}) AS named"  # noqa: S608 - constant tables, bound values
        params += named_params
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    facts = next(row for row in rows if row[0] == _FACTS)
    _, _, _, _, newest, documents, total_length, pending, unfolded = facts
    names = [(str(row[0]), int(row[1]), str(row[2]), str(row[3]), int(row[4])) for row in rows if row[0] != _FACTS]
    return TenantFacts(
        IndexState(bool(pending), bool(unfolded)),
        int(newest or 0),
        bm25.ScopeStats(int(documents), int(total_length)),
        identified(candidate, names, tenants) if candidate is not None else [],
    )
