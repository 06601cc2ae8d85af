"""The one small interface both full-text backends implement: candidates for a query within a scope."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from django.db.models import Q

from search_app.query import Clause, Phrase, Prefix, Term


@dataclass(frozen=True, slots=True)
class Scope:
    """Which documents statistics and candidates come from: tenants, optionally one conversation or run."""

    tenant_ids: tuple[int, ...]
    conversation_pk: int | None = None
    run_pk: int | None = None

    def as_q(self) -> Q:
        q = Q(tenant_id=self.tenant_ids[0]) if len(self.tenant_ids) == 1 else Q(tenant_id__in=self.tenant_ids)
        if self.conversation_pk is not None:
            q &= Q(conversation_id=self.conversation_pk)
        if self.run_pk is not None:
            q &= Q(run_id=self.run_pk)
        return q


@dataclass(frozen=True, slots=True)
class Candidate:
    entry_id: int
    tenant_id: int
    conversation_pk: int
    run_pk: int
    position: int
    role: str
    timestamp: datetime | None
    agent_name: str
    terms: list[str]


CANDIDATE_FIELDS = (
    "entry_id",
    "tenant_id",
    "conversation_id",
    "run_id",
    "position",
    "role",
    "timestamp",
    "agent_name",
    "terms",
)


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

    def candidates(self, scope: Scope, lookup: Lookup) -> list[Candidate]:
        """Every document of `scope` holding any looked-up term, read through the full-text index."""
        ...

    def candidate_sql(self, lookup: Lookup) -> tuple[str, list]:
        """A WHERE condition on the documents table selecting the same candidates, for in-database ranking."""
        ...


def scope_sql(scope: Scope) -> tuple[str, list]:
    sql = f"tenant_id IN ({', '.join(['%s'] * len(scope.tenant_ids))})"
    params: list = list(scope.tenant_ids)
    if scope.conversation_pk is not None:
        sql += " AND conversation_id = %s"
        params.append(scope.conversation_pk)
    if scope.run_pk is not None:
        sql += " AND run_id = %s"
        params.append(scope.run_pk)
    return sql, params


def rows_to_candidates(rows) -> list[Candidate]:
    return [
        Candidate(entry, tenant, conversation, run, position, role, timestamp, agent, terms.split(" ") if terms else [])
        for entry, tenant, conversation, run, position, role, timestamp, agent, terms in rows
    ]
