"""The arguments of a search, checked: every interface (API, CLI, agent tools, dashboard) passes them through here.

A query that does not parse is not refused yet: a pasted id may still be found (search_app.identify).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from search_app.errors import SearchError
from search_app.query import ParsedQuery, QueryError, QueryFilters, parse_query
from sessions_app.models import MessageRole

DEFAULT_LIMIT = 10
MAX_LIMIT = 25
SCOPES = ("conversation", "run", "tenant", "tenants")


def validate_search(
    query: str, scope: str, limit: int | None, roles: Sequence[str]
) -> tuple[ParsedQuery | QueryError, int]:
    """The parsed query (or why it cannot be parsed: a pasted id may still be found) and the limit."""
    if not isinstance(query, str):
        raise SearchError("The query must be text.")
    try:
        parsed: ParsedQuery | QueryError = parse_query(query)
    except QueryError as error:
        parsed = error
    if scope not in SCOPES:
        raise SearchError(f"Unknown scope {scope!r}: use one of {', '.join(SCOPES)}.")
    if limit is None:
        limit = DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise SearchError(f"The limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}.")
    _check_roles(roles)
    return parsed, limit


def _check_roles(roles: Sequence[str]) -> None:
    unknown = sorted(set(roles) - set(MessageRole.values))
    if unknown:
        raise SearchError(f"Unknown role {unknown[0]!r}: use one of {', '.join(MessageRole.values)}.")


def _agree(name: str, in_query: str | None, given: str | None) -> str | None:
    """One value for a filter given both in the query (`name:value`) and as a parameter, or the error."""
    if in_query is not None and given and in_query != given:
        raise SearchError(
            f"The query's {name}:{in_query[:80]!r} differs from the {name} searched ({given[:80]!r}): "
            f"a search covers one {name}."
        )
    return in_query if in_query is not None else given


def _roles(in_query: tuple[str, ...], given: Sequence[str]) -> tuple[str, ...]:
    _check_roles(in_query)
    if in_query and given:
        both = tuple(role for role in in_query if role in given)
        if not both:
            raise SearchError(
                f"The query's role: ({', '.join(in_query)}) and the roles asked for ({', '.join(given)}) "
                "have none in common."
            )
        return both
    return tuple(in_query or given)


@dataclass(frozen=True, slots=True)
class Asked:
    """What a search is restricted to, from its parameters and the filters written in its query, reconciled."""

    conversation: str | None
    run: str | None
    agent: str | None
    roles: tuple[str, ...]


def reconcile(
    named: QueryFilters,
    scope: str,
    conversation_id: str | None,
    run_id: str | None,
    agent: str | None,
    roles: Sequence[str],
) -> Asked:
    """One value per filter, or `SearchError` when the query names another than the parameter."""
    return Asked(
        conversation=_agree("conversation", named.conversation, conversation_id if scope == "conversation" else None),
        run=_agree("run", named.run, run_id),
        agent=_agree("agent", named.agent, agent),
        roles=_roles(named.roles, roles),
    )
