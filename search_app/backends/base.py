"""The one small interface both full-text backends implement, and the SQL pieces they share.

A backend only answers "which documents of this scope can match": a WHERE condition read through its
full-text index. Statistics, ranking and counting are shared by both (search_app.ranking).
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from django.db import connection

from search_app.query import Clause, Phrase, Prefix, Term
from sessions_app.models import StoredMessage, TranscriptEntry

SqlParams = list[bool | int | float | str | bytes | datetime | None]
"""Parameters of a raw SQL statement, in the order of its placeholders."""

DOCS = "search_app_searchdocument"
ENTRIES = TranscriptEntry._meta.db_table
MESSAGES = StoredMessage._meta.db_table


def json_member(key: str, value: str) -> str:
    """`"key":"value"` as compact JSON writes it (the stored messages' form): the value whole, quotes included."""
    return f'"{key}":{json.dumps(value, ensure_ascii=False)}'


def json_like(key: str, value: str) -> str:
    """A LIKE pattern (escaped with a backslash) finding `json_member(key, value)` anywhere."""
    literal = json_member(key, value)
    return "%" + literal.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@dataclass(frozen=True, slots=True)
class DocumentSpan:
    """Where one conversation's documents are: its tenant, a range of ids covering every one of them, and how many
    there are (search_app.models.ConversationIndex)."""

    tenant_id: int
    first: int
    last: int
    documents: int


@dataclass(frozen=True, slots=True)
class Scope:
    """Which documents statistics and candidates come from: tenants, optionally one conversation or run."""

    tenant_ids: tuple[int, ...]
    conversation_pk: int | None = None
    run_pk: int | None = None
    exclude_pending: bool = False
    """Leave out conversations waiting for a rebuild: their documents may predate the tenant's masking patterns."""
    max_document_id: int | None = None
    """Only documents up to this id: a later page sees the index as the first page did (search_app.paging)."""
    span: DocumentSpan | None = None
    """For a conversation: where its documents are, when known (the block ranker reads the blocks overlapping it)."""

    @property
    def small(self) -> bool:
        """A conversation or a run: at most a few thousand documents, read through the b-tree index."""
        return self.conversation_pk is not None or self.run_pk is not None


@dataclass(frozen=True, slots=True)
class Filters:
    """What the caller asked to see; applied after statistics, before ranking and limits."""

    roles: tuple[str, ...] = ()
    agent: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    tool: str | None = None
    """Only messages with a call to, or a result of, the tool of this exact name."""


@dataclass(frozen=True, slots=True)
class Lookup:
    """What the full-text index is asked for: documents holding any of `terms` or a term starting with a prefix.

    A phrase asks for its terms one by one: BM25 needs every document holding any of them (their df), and
    whether they stand next to each other is decided on the candidates' terms afterwards.
    """

    terms: tuple[str, ...]
    prefixes: tuple[str, ...]

    @classmethod
    def of(cls, clauses: Sequence[Clause]) -> "Lookup":
        terms: dict[str, None] = {}
        prefixes: dict[str, None] = {}
        for clause in clauses:
            if isinstance(clause, Term):
                terms[clause.term] = None
            elif isinstance(clause, Phrase):
                terms.update(dict.fromkeys(clause.terms))
            elif isinstance(clause, Prefix):
                prefixes[clause.prefix] = None
        return cls(tuple(terms), tuple(prefixes))


class SearchBackend(Protocol):
    vendor: str
    ranks_in_database: bool
    """Whether word and phrase queries are ranked by SQL (sql_ranking) rather than over fetched candidates."""

    def candidate_sql(self, scope: Scope, lookup: Lookup) -> tuple[str, SqlParams]:
        """A WHERE condition on the documents table selecting candidates, or "" to take the whole (small) scope."""
        ...


def scope_sql(scope: Scope) -> tuple[str, SqlParams]:
    sql = f"tenant_id IN ({', '.join(['%s'] * len(scope.tenant_ids))})"
    params: SqlParams = list(scope.tenant_ids)
    if scope.conversation_pk is not None:
        sql += " AND conversation_id = %s"
        params.append(scope.conversation_pk)
    if scope.run_pk is not None:
        sql += " AND run_id = %s"
        params.append(scope.run_pk)
    if scope.max_document_id is not None:
        sql += " AND id <= %s"
        params.append(scope.max_document_id)
    if scope.exclude_pending:
        tenants = ", ".join(["%s"] * len(scope.tenant_ids))
        sql += (
            " AND conversation_id NOT IN (SELECT conversation_id FROM search_app_conversationindex"  # noqa: S608 - constant tables, bound values
            f" WHERE pending = %s AND tenant_id IN ({tenants}))"
        )
        params += [True, *scope.tenant_ids]
    return sql, params


def visible_sql(filters: Filters, source: str = DOCS) -> tuple[str, SqlParams]:
    """The filters as one SQL condition on the documents, read from `source` (the table, or a subquery's alias)."""
    conditions: list[str] = []
    params: SqlParams = []
    if filters.roles:
        conditions.append(f"role IN ({', '.join(['%s'] * len(filters.roles))})")
        params.extend(filters.roles)
    if filters.agent is not None:
        conditions.append("agent_name = %s")
        params.append(filters.agent)
    adapt = connection.ops.adapt_datetimefield_value
    if filters.since is not None:
        conditions.append("timestamp IS NOT NULL AND timestamp >= %s")
        params.append(adapt(filters.since))
    if filters.until is not None:
        conditions.append("timestamp IS NOT NULL AND timestamp < %s")
        params.append(adapt(filters.until))
    if filters.tool is not None:
        # The stored message JSON names each part's tool as `"tool_name":"…"`; the name is matched whole, as JSON.
        # The entry and its message are joined on the tenant too, so Citus keeps the subquery on the document's
        # shard (a join by id alone is a join it cannot plan) and PostgreSQL on one partition of each.
        conditions.append(
            f"EXISTS (SELECT 1 FROM {ENTRIES} e JOIN {MESSAGES} m ON m.tenant_id = e.tenant_id AND m.id = e.message_id "  # noqa: S608 - constant tables, bound values
            f"WHERE e.tenant_id = {source}.tenant_id AND e.id = {source}.entry_id AND m.data LIKE %s ESCAPE '\\')"
        )
        params.append(json_like("tool_name", filters.tool))
    return (f"({' AND '.join(conditions)})" if conditions else "1 = 1"), params
