"""The dashboard's calls into search (search_app.service.run_search): tenant-wide ranked search for people.

Only binding and shaping for pages happens here; tokenizing, ranking, scope, snippets and redaction are
search_app's. Snippet HTML comes from search_app.snippets, built from escaped text only.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.utils.safestring import SafeString, mark_safe

from sessions_app.models import Conversation, Tenant
from sessions_app.tenancy import scoped


@dataclass
class RankedConversations:
    ids: list[int] = field(default_factory=list)
    notice: str = ""


@dataclass
class HitView:
    position: int
    role: str
    timestamp: datetime | None
    score: float
    snippet_html: SafeString


@dataclass
class HitGroup:
    conversation_pk: int
    external_id: str
    hits: list[HitView] = field(default_factory=list)


@dataclass
class SearchOutcome:
    groups: list[HitGroup] = field(default_factory=list)
    hit_count: int = 0
    indexing: bool = False
    truncated: bool = False
    error: str = ""


def _service():
    try:
        from search_app import service
    except ImportError:
        return None
    return service if hasattr(service, "run_search") else None


def search_available() -> bool:
    return _service() is not None


def _run(tenant: Tenant, query: str, **filters):
    service = _service()
    if service is None:
        return None
    return service.run_search(tenant=tenant, query=query, scope="tenant", **filters)


def search_grouped(
    tenant: Tenant, query: str, *, role: str = "", since: datetime | None = None, until: datetime | None = None
) -> SearchOutcome:
    """Hits for `query` in the tenant, grouped by conversation in the order of each group's best hit."""
    try:
        response = _run(tenant, query, role=role or None, since=since, until=until, limit=25)
    except ValueError as error:  # an empty or oversized query: search says why
        return SearchOutcome(error=str(error))
    if response is None:
        return SearchOutcome(error="Search is not installed yet.")
    groups: dict[str, HitGroup] = {}
    for hit in response.results:
        group = groups.get(hit.conversation_id)
        if group is None:
            group = groups[hit.conversation_id] = HitGroup(0, hit.conversation_id)
        group.hits.append(
            HitView(
                position=hit.position,
                role=hit.role,
                timestamp=hit.timestamp,
                score=hit.score,
                snippet_html=mark_safe(hit.snippet_html),  # noqa: S308 - built from escaped text by search_app
            )
        )
    pks = dict(
        scoped(Conversation, tenant).filter(external_id__in=list(groups)).values_list("external_id", "pk")
    )
    for external_id, group in groups.items():
        group.conversation_pk = pks.get(external_id, 0)
    return SearchOutcome(
        groups=[g for g in groups.values() if g.conversation_pk],
        hit_count=len(response.results),
        indexing=bool(response.indexing),
        truncated=bool(response.truncated),
    )


def ranked_conversation_ids(tenant: Tenant, query: str) -> RankedConversations:
    """Conversations holding the best hits for `query`, best first (tenant scope)."""
    outcome = search_grouped(tenant, query)
    if outcome.error:
        return RankedConversations([], outcome.error)
    notice = "The index is catching up; recent messages may be missing." if outcome.indexing else ""
    return RankedConversations([g.conversation_pk for g in outcome.groups], notice)
