"""The dashboard's calls into search (search_app.service.run_search): tenant-wide ranked search for people.

Only binding and shaping for pages happens here; tokenizing, ranking, scope, snippets and redaction are
search_app's. Snippet HTML comes from search_app.snippets, built from escaped text only.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from django.utils.safestring import SafeString, mark_safe

from search_app.errors import SearchError
from search_app.results import Identified
from search_app.service import run_search
from sessions_app.models import Tenant


class _Filters(TypedDict):
    roles: Sequence[str]
    since: datetime | None
    until: datetime | None


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
    in_live_context: bool = True


@dataclass
class HitGroup:
    conversation_pk: int
    external_id: str
    tenant: str = ""  # the tenant's slug (shown when several tenants are searched)
    hits: list[HitView] = field(default_factory=list)


@dataclass
class SearchOutcome:
    groups: list[HitGroup] = field(default_factory=list)
    hit_count: int = 0
    indexing: bool = False
    reindexing: bool = False
    truncated: bool = False
    error: str = ""
    total_matches: int = 0
    """Matching messages on every page: exact, or a lower bound when `total_is_lower_bound`."""
    total_conversations: int = 0
    total_is_lower_bound: bool = False
    offset: int = 0
    """Hits on earlier pages: this page shows hits offset + 1 to offset + hit_count."""
    next_cursor: str | None = None
    identified: list[Identified] = field(default_factory=list)
    """Conversations, runs and tool calls whose id is exactly the query, shown before the ranked hits."""
    query: str = ""
    """The query as searched (with an unfinished last word as a prefix while typing): what the next page repeats."""

    @property
    def matches_label(self) -> str:
        """The number of matching messages as the page shows it: "22", or "10,000+" past the count bound."""
        return f"{self.total_matches:,}{'+' if self.total_is_lower_bound else ''}"

    @property
    def conversations_label(self) -> str:
        return f"{self.total_conversations:,}{'+' if self.total_is_lower_bound else ''}"

    @property
    def first(self) -> int:
        return self.offset + 1

    @property
    def last(self) -> int:
        return self.offset + self.hit_count


# What a page of grouped hits repeats from search's response as it is.
_PAGE_FACTS = (
    "indexing",
    "reindexing",
    "truncated",
    "total_matches",
    "total_conversations",
    "total_is_lower_bound",
    "offset",
    "next_cursor",
)

# A last word still being typed: plain letters or digits at the very end, not quoted, negated or starred.
# Four characters at least: a shorter prefix matches so many terms that ranking them all takes a second or
# more at a million messages (bench/pages.py), for results nobody reads before the next keystroke.
_UNFINISHED_WORD = re.compile(r"(?:^|\s)(\w{4,})$")


def as_you_type(query: str) -> str | None:
    """`query` with its unfinished last word searched as a prefix ("quok" → "quok*"), or None."""
    if query.count('"') % 2 or not _UNFINISHED_WORD.search(query):
        return None
    return query + "*"


def search_grouped(
    tenant: Tenant,
    query: str,
    *,
    role: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
    typing: bool = False,
    conversation_id: str = "",
    tenants: list[Tenant] | None = None,
    cursor: str | None = None,
) -> SearchOutcome:
    """Hits for `query` in the tenant, grouped by conversation in the order of each group's best hit.

    While `typing`, a query whose words as typed find nothing is tried again with its last word as a prefix,
    so a half-typed word still finds something. Words first, because a prefix costs far more to rank: a
    common word as a prefix took seconds at a million messages (bench/pages.py). `cursor` (a page's
    `next_cursor`) asks for the next page of the query as it was searched.
    """
    filters: _Filters = {"roles": (role,) if role else (), "since": since, "until": until}
    # One conversation (the conversation page's "search in this conversation"), every tenant of the caller (the
    # caller decides which: their own), else the current tenant.
    scope = "conversation" if conversation_id else "tenants" if tenants else "tenant"
    within = conversation_id or None
    several = tenants if scope == "tenants" else None
    try:
        response = run_search(
            tenant=tenant,
            query=query,
            scope=scope,
            conversation_id=within,
            tenants=several,
            cursor=cursor or None,
            **filters,
        )
    except SearchError as error:  # an empty or oversized query, a bad filter or cursor: search says why
        return SearchOutcome(error=str(error), query=query)
    searched = query
    identified = response.identified  # an id typed whole is found as typed, not as a prefix
    widen = typing and not cursor and not response.results and not identified
    prefixed = as_you_type(query) if widen else None
    if prefixed:
        try:
            response = run_search(
                tenant=tenant, query=prefixed, scope=scope, conversation_id=within, tenants=several, **filters
            )
            searched = prefixed
        except SearchError:
            pass  # a prefix search refused for this word: the answer for the words as typed stands
    groups: dict[int, HitGroup] = {}
    for hit in response.results:
        group = groups.get(hit.conversation_pk)
        if group is None:
            group = groups[hit.conversation_pk] = HitGroup(hit.conversation_pk, hit.conversation_id, hit.tenant)
        group.hits.append(
            HitView(
                position=hit.position,
                role=hit.role,
                timestamp=hit.timestamp,
                score=hit.score,
                # Built by search_app.snippets from escaped, redacted text with <mark> around matches.
                snippet_html=mark_safe(hit.snippet_html),  # noqa: S308
                in_live_context=hit.in_live_context,
            )
        )
    return SearchOutcome(
        groups=list(groups.values()),
        hit_count=len(response.results),
        error=response.message,
        identified=identified,
        query=searched,
        **{name: getattr(response, name) for name in _PAGE_FACTS},
    )


def ranked_conversation_ids(tenant: Tenant, query: str) -> RankedConversations:
    """Conversations holding the best hits for `query`, best first (tenant scope)."""
    outcome = search_grouped(tenant, query)
    if outcome.error:
        return RankedConversations([], outcome.error)
    notice = ""
    if outcome.reindexing:
        notice = "Indexing: some conversations are being re-indexed; recent messages may be missing."
    return RankedConversations([g.conversation_pk for g in outcome.groups], notice)
