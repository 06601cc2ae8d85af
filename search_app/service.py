"""Search and read-in-context: the one service every interface calls (API, CLI, agent tools, dashboard).

Order of work in `run_search`: validate everything, resolve the scope (what the caller may see; anything
outside it answers exactly like something that does not exist), take BM25 statistics over that scope, read
candidates from the full-text index, apply filters and exclusions, rank exactly, cut to the page, and only then
load, redact and snippet the hits that are returned. Visibility is decided before any limit applies.

Every response carries the exact number of matching messages and of the conversations they are in (counted by
search_app.backends.counting, apart from the ranking, which may prune) and, while more remain, an opaque cursor
for the next page (search_app.paging).
"""

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Count, Max, Sum

from masking import compile_rules, redact
from search_app import bm25, paging
from search_app.backends import Filters, Lookup, Scope, backend_for_connection
from search_app.backends.base import fetch_candidates, json_member, scope_sql
from search_app.backends.block_ranking import BlockSearch, blocks_rankable
from search_app.backends.counting import MatchCounts, count_matches
from search_app.backends.sql_ranking import rank_in_database, sql_rankable
from search_app.errors import NEEDS_CONVERSATION, NEEDS_RUN, NotFound, SearchError
from search_app.index import pending_in
from search_app.models import ConversationIndex, SearchDocument
from search_app.query import ParsedQuery, QueryError, QueryFilters, parse_query
from search_app.snippets import make_snippet
from sessions_app.models import Conversation, MessageRole, Run, Tenant, ToolEffect, TranscriptEntry
from sessions_app.tenancy.scoping import scoped

DEFAULT_LIMIT = 10
MAX_LIMIT = 25
MAX_RESPONSE_BYTES = 32 * 1024
MAX_CONTEXT_SIDE = 25
MAX_CONTEXT_MESSAGE_CHARS = 4000
SCOPES = ("conversation", "run", "tenant", "tenants")


def no_history_for_run(run_id: str) -> str:
    return f"No persisted history for run '{run_id}'."


def no_history_for_conversation(conversation_id: str) -> str:
    return f"No persisted history for conversation '{conversation_id}'."


def bm25_params() -> bm25.Bm25Params:
    return bm25.Bm25Params(
        k1=float(getattr(settings, "SESSIONDESK_SEARCH_BM25_K1", 1.2)),
        b=float(getattr(settings, "SESSIONDESK_SEARCH_BM25_B", 0.75)),
    )


@dataclass(frozen=True)
class SearchHit:
    entry_id: int
    tenant: str
    conversation_pk: int
    conversation_id: str
    run_id: str
    agent: str
    position: int
    role: str
    timestamp: datetime | None
    score: float
    snippet: str
    snippet_html: str

    def as_dict(self) -> dict:
        data = asdict(self)
        data["timestamp"] = self.timestamp.isoformat() if self.timestamp else None
        return data


@dataclass(frozen=True)
class Identified:
    """A conversation, run or tool call whose id is exactly the query: answered before any ranked result."""

    kind: str  # "conversation", "run" or "tool_call"
    tenant: str
    conversation_id: str
    run_id: str = ""
    position: int | None = None
    role: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class SearchResponse:
    identified: list[Identified] = field(default_factory=list)
    """What the query names exactly (by conversation, run or tool-call id), first page only."""
    results: list[SearchHit] = field(default_factory=list)
    indexing: bool = False
    truncated: bool = False
    message: str = ""
    scope: str = "conversation"
    total_matches: int = 0
    """Matching messages in the scope (all pages), exactly."""
    total_conversations: int = 0
    """Conversations holding at least one matching message, exactly."""
    offset: int = 0
    """Results on earlier pages: this page shows results offset + 1 to offset + len(results)."""
    next_cursor: str | None = None
    """Pass as `cursor` with the same search for the next page; None on the last page."""

    def as_dict(self) -> dict:
        return {
            "identified": [item.as_dict() for item in self.identified],
            "results": [hit.as_dict() for hit in self.results],
            "indexing": self.indexing,
            "truncated": self.truncated,
            "message": self.message,
            "scope": self.scope,
            "total_matches": self.total_matches,
            "total_conversations": self.total_conversations,
            "offset": self.offset,
            "next_cursor": self.next_cursor,
        }


def _encoded_size(data: dict) -> int:
    return len(json.dumps(data, ensure_ascii=False).encode())


def fit_response(response: SearchResponse, max_bytes: int = MAX_RESPONSE_BYTES) -> SearchResponse:
    """Drop the lowest-ranked hits until the JSON response fits `max_bytes`, saying so with `truncated`."""
    while response.results and _encoded_size(response.as_dict()) > max_bytes:
        response.results.pop()
        response.truncated = True
    return response


def _validate(query: str, scope: str, limit: int | None, roles: Sequence[str]) -> tuple[ParsedQuery | QueryError, int]:
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


def _statistics(scope: Scope) -> bm25.ScopeStats:
    pending = ConversationIndex.objects.filter(tenant_id__in=scope.tenant_ids, pending=True)
    if scope.run_pk is not None:
        documents = SearchDocument.objects.filter(tenant_id__in=scope.tenant_ids, run_id=scope.run_pk)
        if scope.exclude_pending:
            documents = documents.exclude(conversation_id__in=pending.values("conversation_id"))
        row = documents.aggregate(n=Count("id"), length=Sum("length"))
        return bm25.ScopeStats(row["n"] or 0, row["length"] or 0)
    rows = ConversationIndex.objects.filter(tenant_id__in=scope.tenant_ids)
    if scope.exclude_pending:
        rows = rows.filter(pending=False)
    if scope.conversation_pk is not None:
        rows = rows.filter(conversation_id=scope.conversation_pk)
    row = rows.aggregate(n=Sum("documents"), length=Sum("total_length"))
    return bm25.ScopeStats(row["n"] or 0, row["length"] or 0)


def _rules_by_tenant(tenants: Sequence[Tenant]) -> dict[int, tuple]:
    rules = {}
    for tenant in tenants:
        try:
            rules[tenant.id] = compile_rules(tenant.redaction_patterns or [])
        except ValueError as error:
            # Fail closed: without the tenant's own rules nothing of its text may be shown.
            raise SearchError(f"Tenant {tenant.slug!r} has an unusable redaction pattern: {error}") from None
    return rules


def run_search(
    *,
    tenant: Tenant,
    query: str,
    scope: str = "conversation",
    conversation_id: str | None = None,
    run_id: str | None = None,
    roles: Sequence[str] = (),
    agent: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    tenants: Sequence[Tenant] | None = None,
    cursor: str | None = None,
) -> SearchResponse:
    """Ranked hits for `query` within what the caller may see; raises `SearchError` for bad input.

    `tenant` is the caller's current tenant. `scope="tenants"` searches every tenant in `tenants` (the caller's
    own, as decided by the caller's permissions) and must include `tenant`. `cursor` is a previous response's
    `next_cursor` for the same search.
    """
    parsed, limit = _validate(query, scope, limit, roles)
    searchable = [tenant]
    if scope == "tenants":
        if not tenants or tenant.id not in {t.id for t in tenants}:
            raise SearchError("Searching several tenants needs the list of tenants the caller belongs to.")
        searchable = list({t.id: t for t in tenants}.values())
    tenant_ids = tuple(t.id for t in searchable)
    search_print = paging.fingerprint(
        query=query,
        scope=scope,
        conversation_id=conversation_id,
        run_id=run_id,
        roles=roles,
        agent=agent,
        since=since,
        until=until,
        tenant_ids=tenant_ids,
    )
    after = paging.decode(cursor, search_print) if cursor is not None else None
    response = SearchResponse(scope=scope, offset=after.offset if after else 0)

    named = parsed.filters if isinstance(parsed, ParsedQuery) else QueryFilters()
    conversation_ref = _agree("conversation", named.conversation, conversation_id if scope == "conversation" else None)
    run_ref = _agree("run", named.run, run_id)
    agent = _agree("agent", named.agent, agent)
    roles = _roles(named.roles, roles)

    conversation_pk = run_pk = None
    if scope == "conversation" and not conversation_ref:
        response.message = NEEDS_CONVERSATION
        return response
    if conversation_ref:
        # The caller's conversation (conversation scope), or the conversation: filter within the searched tenants.
        conversations = Conversation.objects.filter(tenant_id__in=tenant_ids, external_id=conversation_ref)
        if scope == "conversation":
            conversations = scoped(Conversation, tenant).filter(external_id=conversation_ref)
        conversation_pk = conversations.order_by("id").values_list("id", flat=True).first()
        if conversation_pk is None:
            response.message = no_history_for_conversation(conversation_ref)
            return response
    if scope == "run" and not run_ref:
        response.message = NEEDS_RUN
        return response
    if run_ref:
        runs = Run.objects.filter(tenant_id__in=tenant_ids, run_id=run_ref)
        if conversation_pk is not None:
            runs = runs.filter(conversation_id=conversation_pk)
        run_pk = runs.order_by("id").values_list("id", flat=True).first()
        if run_pk is None:
            response.message = no_history_for_run(run_ref)
            return response

    if after is None:
        response.identified = identify(query, searchable, conversation_pk, run_pk)
    if isinstance(parsed, QueryError):
        if response.identified:
            return response  # an id that is no query (only punctuation, say) is still found
        raise SearchError(str(parsed))

    response.indexing = pending_in(tenant_ids, conversation_pk)
    # A pending conversation is searched again once rebuilt: until then its documents may hold text indexed before
    # the tenant's current masking patterns.
    search_scope = Scope(
        tenant_ids,
        conversation_pk,
        run_pk,
        exclude_pending=response.indexing,
        max_document_id=after.max_document_id if after else None,
    )
    if after is None:
        # The point in time later pages see: read before ranking, so a page-one result is never past it.
        newest = SearchDocument.objects.filter(tenant_id__in=tenant_ids).aggregate(newest=Max("id"))["newest"] or 0
        stats = _statistics(search_scope)
    else:
        newest, stats = after.max_document_id, bm25.ScopeStats(after.documents, after.total_length)
    backend = backend_for_connection()
    filters = Filters(roles, agent, since, until, named.tool)
    # Tenant-wide words and phrases: one read of the blocks' metadata serves the count and the ranking.
    blocks = None
    if _from_blocks(parsed, search_scope, filters):
        blocks = BlockSearch(parsed, search_scope, stats, bm25_params())
    counts = blocks.count() if blocks else None
    ranked, ranked_total = _page(parsed, search_scope, stats, filters, limit, after, blocks)
    if counts is None:
        if ranked_total is not None and (search_scope.conversation_pk or search_scope.run_pk):
            # One conversation: the ranker counted its matches on the way (a count query would read them again).
            counts = MatchCounts(ranked_total, 1 if ranked_total else 0)
        else:
            counts = count_matches(backend, search_scope, parsed, filters)
    response.total_matches, response.total_conversations = counts.messages, counts.conversations
    response.results = _hits(ranked, parsed, searchable)
    fit_response(response)
    shown = len(response.results)
    if shown and response.offset + shown < min(response.total_matches, paging.MAX_DEPTH):
        key, score = ranked[shown - 1]
        position = paging.PageCursor(response.offset + shown, score, key, newest, stats.documents, stats.total_length)
        response.next_cursor = paging.encode(position, search_print)
    return response


MAX_IDENTIFIED = 10
MAX_ID_CHARS = 400


def identify(
    query: str, tenants: Sequence[Tenant], conversation_pk: int | None = None, run_pk: int | None = None
) -> list[Identified]:
    """The conversations, runs and tool-call messages whose id is exactly `query` (stripped), within the scope.

    A tool call is found through the harness's tool-effect ledger (an index on tenant and call id), then its call
    and result messages in the runs it names by the id as it stands in their JSON, matched whole. Reading every
    message's JSON instead would cost a scan of the scope on every search; a call the ledger never recorded is
    found by the words of its arguments and result, not by its id.
    """
    candidate = query.strip()
    if not candidate or len(candidate) > MAX_ID_CHARS:
        return []
    slugs = {t.id: t.slug for t in tenants}
    found: list[Identified] = []
    if run_pk is None:
        conversations = Conversation.objects.filter(tenant_id__in=slugs, external_id=candidate)
        if conversation_pk is not None:
            conversations = conversations.filter(id=conversation_pk)
        for tenant_id, external_id in conversations.order_by("id").values_list("tenant_id", "external_id")[:3]:
            found.append(Identified("conversation", slugs[tenant_id], external_id))
    runs = Run.objects.filter(tenant_id__in=slugs, run_id=candidate)
    if conversation_pk is not None:
        runs = runs.filter(conversation_id=conversation_pk)
    if run_pk is not None:
        runs = runs.filter(id=run_pk)
    for tenant_id, external_id, run in (
        runs.filter(conversation__tenant_id__in=slugs)
        .order_by("id")
        .values_list("tenant_id", "conversation__external_id", "run_id")[:3]
    ):
        found.append(Identified("run", slugs[tenant_id], external_id, run))
    ledger = ToolEffect.objects.filter(tenant_id__in=slugs, tool_call_id=candidate)
    if run_pk is not None:
        ledger = ledger.filter(run_id=run_pk)
    elif conversation_pk is not None:
        ledger = ledger.filter(run__tenant_id__in=slugs, run__conversation_id=conversation_pk)
    run_pks = list(ledger.values_list("run_id", flat=True)[:MAX_IDENTIFIED])
    if not run_pks:
        return found
    entries = TranscriptEntry.objects.filter(tenant_id__in=slugs, run_id__in=run_pks, summary_artifact=False)
    calls = entries.filter(message__tenant_id__in=slugs, message__data__contains=json_member("tool_call_id", candidate))
    for tenant_id, external_id, run, position, role in calls.order_by("conversation_id", "position").values_list(
        "tenant_id", "conversation__external_id", "run__run_id", "position", "role"
    )[:MAX_IDENTIFIED]:
        found.append(Identified("tool_call", slugs[tenant_id], external_id, run, position, role))
    return found


def _from_blocks(parsed: ParsedQuery, search_scope: Scope, filters: Filters) -> bool:
    return bool(getattr(settings, "SESSIONDESK_SEARCH_BLOCKS", True)) and blocks_rankable(parsed, search_scope, filters)


def _rank(
    parsed: ParsedQuery,
    search_scope: Scope,
    stats: bm25.ScopeStats,
    filters: Filters,
    window: int,
    blocks: BlockSearch | None = None,
) -> tuple[list[tuple[int, float]], int | None]:
    """The top `window` (document id, score) of the scope, best first, ties by id, from the fastest exact ranker:
    the blocks for tenant-wide words and phrases (`blocks`, prepared with the count), else the rankers below. With
    it, the number of matches in the scope when the ranker counted them (in the database), else None."""
    if blocks is not None:
        return blocks.rank(window), None
    backend = backend_for_connection()
    lookup = Lookup.of(parsed.should)
    in_database = getattr(settings, "SESSIONDESK_SEARCH_SQL_RANKING", None)
    if in_database is None:
        in_database = backend.ranks_in_database
    if in_database and sql_rankable(parsed):
        return rank_in_database(
            parsed,
            *scope_sql(search_scope),
            *backend.candidate_sql(search_scope, lookup),
            stats,
            bm25_params(),
            filters,
            window,
        )
    candidates = fetch_candidates(backend, search_scope, lookup, filters)
    return bm25.rank(parsed, candidates, stats, bm25_params())[:window], None


def _page(
    parsed: ParsedQuery,
    search_scope: Scope,
    stats: bm25.ScopeStats,
    filters: Filters,
    limit: int,
    after: paging.PageCursor | None,
    blocks: BlockSearch | None = None,
) -> tuple[list[tuple[int, float]], int | None]:
    """The `limit` results following the cursor's (score, id), or the first `limit`; and the number of matches
    when the ranker counted them (`_rank`).

    The rankers answer a top k, so a page is cut from the top offset + limit. When messages arrived or left since
    the cursor was made, fewer may follow it there; the window then grows until the page is full or the ranking
    ends, so a page never repeats a result the previous one showed.
    """
    if after is None:
        return _rank(parsed, search_scope, stats, filters, limit, blocks)
    window = after.offset + limit
    while True:
        ranked, total = _rank(parsed, search_scope, stats, filters, window, blocks)
        following = [(key, score) for key, score in ranked if after.after(score, key)]
        if len(following) >= limit or len(ranked) < window or window >= paging.MAX_DEPTH + limit:
            return following[:limit], total
        window = min(window * 2, paging.MAX_DEPTH + limit)


def _hits(ranked: list[tuple[int, float]], parsed: ParsedQuery, tenants: Sequence[Tenant]) -> list[SearchHit]:
    """Provenance, redacted snippet and highlight for the returned hits only."""
    if not ranked:
        return []
    # One query for the hits' provenance and text; every joined table names the tenants too (docs/SCALING.md).
    tenant_ids = [tenant.id for tenant in tenants]
    rows = SearchDocument.objects.filter(
        tenant_id__in=tenant_ids,
        id__in=[key for key, _ in ranked],
        entry__tenant_id__in=tenant_ids,
        conversation__tenant_id__in=tenant_ids,
        run__tenant_id__in=tenant_ids,
    ).values_list(
        "id",
        "entry_id",
        "tenant_id",
        "conversation_id",
        "conversation__external_id",
        "run__run_id",
        "position",
        "role",
        "timestamp",
        "agent_name",
        "entry__text",
    )
    meta = {row[0]: row for row in rows}
    rules = _rules_by_tenant(tenants)
    slugs = {t.id: t.slug for t in tenants}
    hits = []
    for key, value in ranked:
        row = meta.get(key)
        if row is None:
            continue  # deleted since it was ranked
        _, entry_id, tenant_id, conversation_pk, conversation_id, run_id, position, role, timestamp, agent, text = row
        snippet = make_snippet(redact(text, rules[tenant_id]), parsed)
        hits.append(
            SearchHit(
                entry_id=entry_id,
                tenant=slugs[tenant_id],
                conversation_pk=conversation_pk,
                conversation_id=conversation_id,
                run_id=run_id,
                agent=agent,
                position=position,
                role=role,
                timestamp=timestamp,
                score=value,
                snippet=snippet.text,
                snippet_html=snippet.html,
            )
        )
    return hits


@dataclass(frozen=True)
class ContextMessage:
    position: int
    run_id: str
    role: str
    timestamp: datetime | None
    text: str
    cut: bool

    def as_dict(self) -> dict:
        data = asdict(self)
        data["timestamp"] = self.timestamp.isoformat() if self.timestamp else None
        return data


@dataclass
class ContextWindow:
    conversation_id: str
    around: int
    messages: list[ContextMessage]
    truncated: bool = False

    def as_dict(self) -> dict:
        return {
            "conversation_id": self.conversation_id,
            "around": self.around,
            "messages": [m.as_dict() for m in self.messages],
            "truncated": self.truncated,
        }


def _side(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CONTEXT_SIDE:
        raise SearchError(f"'{name}' must be a whole number from 0 to {MAX_CONTEXT_SIDE}, got {value!r}.")
    return value


def read_context(
    *,
    tenant: Tenant,
    position: int,
    before: int = 5,
    after: int = 5,
    conversation_id: str | None = None,
    run_id: str | None = None,
) -> ContextWindow:
    """The message at `position` of a conversation (named directly, or through one of its runs) with the
    `before` messages preceding it and `after` following it, redacted; `NotFound` when it is not the caller's.

    Given both, the run must belong to the conversation (an agent in conversation scope reads only its own).
    """
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise SearchError(f"'position' must be a whole number from 0, got {position!r}.")
    before, after = _side("before", before), _side("after", after)
    conversation: Conversation | None
    if run_id is not None:
        runs = scoped(Run, tenant).filter(run_id=run_id)
        if conversation_id is not None:
            runs = runs.filter(conversation__external_id=conversation_id)
        run = runs.select_related("conversation").first()
        if run is None:
            raise NotFound(no_history_for_run(run_id))
        conversation = run.conversation
    elif conversation_id is not None:
        conversation = scoped(Conversation, tenant).filter(external_id=conversation_id).first()
        if conversation is None:
            raise NotFound(no_history_for_conversation(conversation_id))
    else:
        raise SearchError("Reading context needs a conversation id or a run id.")
    entries = (
        scoped(TranscriptEntry, tenant)
        .filter(conversation=conversation, summary_artifact=False, position__gte=position - before)
        .filter(position__lte=position + after)
        .order_by("position")
        .values_list("position", "run__run_id", "role", "timestamp", "text")
    )
    rules = _rules_by_tenant([tenant])[tenant.id]
    messages = []
    for entry_position, entry_run, role, timestamp, text in entries:
        shown = redact(text, rules)
        cut = len(shown) > MAX_CONTEXT_MESSAGE_CHARS
        messages.append(
            ContextMessage(entry_position, entry_run, role, timestamp, shown[:MAX_CONTEXT_MESSAGE_CHARS], cut)
        )
    window = ContextWindow(conversation.external_id, position, messages)
    # Over the size cap, drop the messages farthest from the hit first.
    while len(window.messages) > 1 and _encoded_size(window.as_dict()) > MAX_RESPONSE_BYTES:
        farthest = max(window.messages, key=lambda m: abs(m.position - position))
        window.messages.remove(farthest)
        window.truncated = True
    return window
