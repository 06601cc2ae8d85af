"""What a list filter URL (`/conversations/?…`), a saved view (`/views/<pk>/`) or a search (`/search/?q=…`, or just
its text) selects: the conversations that page lists, in its order, read through the list's own form, clauses and
query, so a review queue filled from a URL or a view, and the read API and MCP tool listing a view, hold what the
list showed.

The dashboard hands `conversations_for` to review (`review.queues.create_queue(select=…)`): the URLs are the
dashboard's pages, so reading them is the dashboard's; review reads no URL and imports nothing of the dashboard.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.db.models import QuerySet
from django.http import QueryDict

from input_errors import RejectedInput
from sessions_app.dashboard import conversation_list
from sessions_app.dashboard.forms import ConversationFilterForm
from sessions_app.dashboard.search_access import ranked_conversation_ids
from sessions_app.models import Conversation, SavedView, Tenant
from sessions_app.review import scores
from sessions_app.review.score_filters import ReviewQuery, parse_review_query
from sessions_app.tenancy.scoping import scoped

FILTER_PATHS = ("/conversations/", "/search/")
VIEW_PATH = re.compile(r"^/views/(?P<pk>[0-9]{1,18})/$")


def filter_params(source: str) -> QueryDict:
    """The query parameters of a list or search URL; anything else is search text (`q`)."""
    parts = urlsplit(source.strip())
    if parts.path not in FILTER_PATHS:
        params = QueryDict(mutable=True)
        params["q"] = source.strip()
    else:
        params = QueryDict(parts.query)
    if parts.path != "/conversations/" and not params.get("q", "").strip():
        raise RejectedInput("Give a list filter URL (/conversations/?…) or a search (/search/?q=… or its text).")
    return params


def form_errors(form: ConversationFilterForm) -> str:
    return " ".join(str(e) for errs in form.errors.values() for e in errs)


@dataclass(frozen=True)
class Selection:
    """What a list filter selects: `conversations` narrowed by every filter and score clause; ordered by the
    list's `sort`, unless the filter holds search text (rank order) or a score sort (`review`)."""

    tenant: Tenant
    conversations: QuerySet[Conversation]
    sort: conversation_list.Sort
    review: ReviewQuery

    @property
    def keyset(self) -> bool:
        """Whether the order is a list column's, which keyset paging can walk (else only `ordered_ids` orders)."""
        return not self.review.text and not self.review.sort

    def ordered_ids(self, limit: int, qs: QuerySet[Conversation] | None = None) -> list[int]:
        """The pks of the first `limit` conversations in the list's order (of `qs`, a narrowing of ours)."""
        qs = self.conversations if qs is None else qs
        if self.review.text:
            found = ranked_conversation_ids(self.tenant, self.review.text)
            allowed = set(qs.filter(pk__in=found.ids).values_list("pk", flat=True))
            return [pk for pk in found.ids if pk in allowed][:limit]
        if self.review.sort:
            return scores.sorted_by_score(qs, self.tenant, self.review, limit)
        prefix = "-" if self.sort.descending else ""
        return list(qs.order_by(f"{prefix}{self.sort.field}", f"{prefix}pk").values_list("pk", flat=True)[:limit])


def select(tenant: Tenant, params: QueryDict) -> Selection:
    """The list's selection for these query parameters; RejectedInput naming what the list form refuses."""
    form = ConversationFilterForm(params, agents=conversation_list.agent_names(tenant))
    if not form.is_valid():
        raise RejectedInput(form_errors(form))
    review = parse_review_query(form.cleaned_data.get("q", ""))
    if review.sort:
        scores.sort_definition(tenant, review)  # an unknown or categorical sort score is refused now
    qs = scores.narrow_by_scores(conversation_list.filtered_conversations(tenant, form.filters()), tenant, review)
    return Selection(tenant, qs, conversation_list.SORTS[form.sort_key()], review)


def view_conversations(tenant: Tenant, name: str) -> QuerySet[Conversation]:
    """The conversations the tenant's saved view `name` selects (its filters, score clauses and search text),
    unordered; RejectedInput (404) when the tenant has no view of that name."""
    # No saved name holds a NUL (PostgreSQL's text cannot), and PostgreSQL refuses one in a query: unknown.
    view = None if "\x00" in name else scoped(SavedView, tenant).filter(name__iexact=name.strip()).first()
    if view is None:
        raise RejectedInput(f"No saved view named {name.strip()[:80]!r} in this tenant.", status=404)
    selection = select(tenant, view_params(view))
    if selection.review.text:
        return selection.conversations.filter(pk__in=ranked_conversation_ids(tenant, selection.review.text).ids)
    return selection.conversations


def view_params(view: SavedView) -> QueryDict:
    return QueryDict(view.query)


def saved_view_source(tenant: Tenant, source: str) -> SavedView | None:
    """The tenant's saved view a `/views/<pk>/` source names (RejectedInput when it is none of the tenant's,
    another tenant's included); None for any other source."""
    match = VIEW_PATH.match(urlsplit(source.strip()).path)
    if match is None:
        return None
    view = scoped(SavedView, tenant).filter(pk=int(match["pk"])).first()
    if view is None:
        raise RejectedInput("No such saved view in this tenant.", status=404)
    return view


def conversations_for(tenant: Tenant, source: str, limit: int) -> list[int]:
    """The pks of the conversations `source` selects in the tenant, in the order its page shows them, at most
    `limit`; RejectedInput naming what cannot be read."""
    view = saved_view_source(tenant, source)
    params = view_params(view) if view is not None else filter_params(source)
    return select(tenant, params).ordered_ids(limit)
