"""Search: the one entry point every interface calls (API, CLI, agent tools, dashboard), as orchestration only.

Order of work in `run_search`: validate everything (search_app.validation), resolve the scope (search_app.scope:
what the caller may see; anything outside it answers exactly like something that does not exist), answer the ids
the query names (search_app.identify), take BM25 statistics over the scope (for whole tenants the ids, the index
state, the point in time and the statistics are one statement, search_app.facts; for one conversation,
ranking.scoped_blocks.conversation_facts), rank exactly with the ranker chosen
for the query (search_app.ranking: candidates from the full-text index, filters and exclusions, the exact top k),
cut to the page, and only then load, redact and snippet the hits that are returned (search_app.hits).
Visibility is decided before any limit applies.

Every response carries the number of matching messages and of the conversations they are in (counted apart
from the ranking, which may prune: exact up to a bound, past it a lower bound that says it is one) and, while
more remain, an opaque cursor for the next page (search_app.paging). Reading in context is search_app.context.
"""

from collections.abc import Sequence
from datetime import datetime

from django.db.models import Max

from search_app import bm25, paging
from search_app.backends import Filters, Scope
from search_app.errors import SearchError
from search_app.facts import TenantFacts, tenant_facts
from search_app.hits import hits
from search_app.identify import identify
from search_app.index import index_state
from search_app.models import SearchDocument
from search_app.query import ParsedQuery, QueryError, QueryFilters
from search_app.ranking import Ranked, choose, rank_page, scope_statistics
from search_app.ranking.scoped_blocks import ConversationFacts, conversation_facts
from search_app.results import SearchResponse, fit_response
from search_app.scope import Target, find_target, no_history_for_conversation, searchable_tenants
from search_app.validation import reconcile, validate_search
from sessions_app.models import ApiKey, Tenant
from sessions_app.tenancy.scoping import conversations_readable_by


def run_search(
    *,
    # Who searches, where, for what, and which page:
    tenant: Tenant,
    tenants: Sequence[Tenant] | None = None,
    scope: str = "conversation",
    conversation_id: str | None = None,
    run_id: str | None = None,
    query: str,
    roles: Sequence[str] = (),
    agent: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    api_key: ApiKey | None = None,
) -> SearchResponse:
    """Ranked hits for `query` within what the caller may see; raises `SearchError` for bad input.

    `tenant` is the caller's current tenant. `scope="tenants"` searches every tenant in `tenants` (the caller's
    own, as decided by the caller's permissions) and must include `tenant`. `cursor` is a previous response's
    `next_cursor` for the same search. A client `api_key` searches only conversations it wrote.
    """
    parsed, limit = validate_search(query, scope, limit, roles)
    searchable = searchable_tenants(tenant, scope, tenants)
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
    asked = reconcile(named, scope, conversation_id, run_id, agent, roles)
    first_page = query if after is None else None
    facts = None
    if scope == "conversation" and asked.conversation and not asked.run and conversations_readable_by(api_key) is None:
        # The agent's own history (the harness tool's default): the conversation, its statistics, range, state, the
        # point in time and the ids the query names in one statement; the same conversation find_target would find
        # (scoped to the tenant).
        facts = conversation_facts((tenant.id,), None, asked.conversation, query=first_page, tenants=searchable)
        target: Target | str = (
            Target(facts.conversation_pk) if facts else no_history_for_conversation(asked.conversation)
        )
    else:
        target = find_target(scope, tenant, tenant_ids, asked.conversation, asked.run, api_key)
    if isinstance(target, str):
        response.message = target
        return response
    tenant_wide = None
    if target.conversation_pk is None and target.run_pk is None:
        # The ids the query names, the index state, the point in time and the statistics: one statement.
        tenant_wide = tenant_facts(searchable, first_page)
    elif facts is None and target.run_pk is None:
        # The conversation's statistics, range, state, the point in time and the ids: one statement.
        facts = conversation_facts(tenant_ids, target.conversation_pk, query=first_page, tenants=searchable)
    if after is None:
        known = tenant_wide.identified if tenant_wide is not None else facts.identified if facts is not None else None
        response.identified = (
            known if known is not None else identify(query, searchable, target.conversation_pk, target.run_pk)
        )
    if isinstance(parsed, QueryError):
        if response.identified:
            return response  # an id that is no query (only punctuation, say) is still found
        raise SearchError(str(parsed))

    if facts is not None:
        state = facts.state
    elif tenant_wide is not None:
        state = tenant_wide.state
    else:
        state = index_state(tenant_ids, target.conversation_pk, target.run_pk)
    # `indexing` while anything of the scope is pending or unfolded. A pending conversation is searched again once
    # rebuilt: until then its documents may hold text indexed before the tenant's current masking patterns.
    # Unfolded documents are searched (the tail is scored directly), only more slowly.
    response.indexing = state.indexing
    response.reindexing = state.pending
    search_scope = Scope(
        tenant_ids,
        target.conversation_pk,
        target.run_pk,
        exclude_pending=state.pending,
        max_document_id=after.max_document_id if after else None,
        span=facts.span if facts else None,
    )
    newest, stats = _point_in_time(search_scope, after, facts, tenant_wide)
    ranker = choose(parsed, search_scope, stats, Filters(asked.roles, asked.agent, since, until, named.tool))
    ranked, ranked_total = rank_page(ranker, limit, after)
    counts = ranker.count(ranked_total)
    response.total_matches, response.total_conversations = counts.messages, counts.conversations
    response.total_is_lower_bound = counts.lower_bound
    response.results = hits(ranked, parsed, searchable)
    fit_response(response)
    response.next_cursor = _next_cursor(response, ranked, limit, newest, stats, search_print)
    return response


def _point_in_time(
    scope: Scope, after: paging.PageCursor | None, facts: ConversationFacts | None, tenant_wide: TenantFacts | None
) -> tuple[int, bm25.ScopeStats]:
    """The newest document and the statistics every page of this search sees: the first page's."""
    if after is not None:
        return after.max_document_id, bm25.ScopeStats(after.documents, after.total_length)
    if facts is not None:
        return facts.newest, facts.stats
    if tenant_wide is not None:
        return tenant_wide.newest, tenant_wide.stats
    # Read before ranking, so a page-one result is never past it.
    newest = SearchDocument.objects.filter(tenant_id__in=scope.tenant_ids).aggregate(newest=Max("id"))["newest"]
    return newest or 0, scope_statistics(scope)


def _next_cursor(
    response: SearchResponse, ranked: Ranked, limit: int, newest: int, stats: bm25.ScopeStats, search_print: str
) -> str | None:
    shown = len(response.results)
    if not shown or response.offset + shown >= paging.MAX_DEPTH:
        return None
    if response.total_is_lower_bound:
        # The total is only a bound: the ranking itself says whether more follow (a short page is the last).
        if len(ranked) < limit and not response.truncated:
            return None
    elif response.offset + shown >= response.total_matches:
        return None
    key, score = ranked[shown - 1]
    position = paging.PageCursor(response.offset + shown, score, key, newest, stats.documents, stats.total_length)
    return paging.encode(position, search_print)
