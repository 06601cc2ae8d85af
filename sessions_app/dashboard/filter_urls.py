"""What a list filter URL (`/conversations/?…`) or a search (`/search/?q=…`, or just its text) selects: the
conversations that page lists, in its order, read through the list's own form, clauses and query, so a review
queue filled from a URL holds what the list showed.

The dashboard hands `conversations_for` to review (`review.queues.create_queue(select=…)`): the URLs are the
dashboard's pages, so reading them is the dashboard's; review reads no URL and imports nothing of the dashboard.
"""

from urllib.parse import urlsplit

from django.http import QueryDict

from input_errors import RejectedInput
from sessions_app.dashboard import conversation_list
from sessions_app.dashboard.forms import ConversationFilterForm
from sessions_app.dashboard.search_access import ranked_conversation_ids
from sessions_app.models import Tenant
from sessions_app.review import scores
from sessions_app.review.score_filters import parse_review_query

FILTER_PATHS = ("/conversations/", "/search/")


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


def conversations_for(tenant: Tenant, source: str, limit: int) -> list[int]:
    """The pks of the conversations `source` selects in the tenant, in the order its page shows them, at most
    `limit`; RejectedInput naming what cannot be read."""
    form = ConversationFilterForm(filter_params(source), agents=conversation_list.agent_names(tenant))
    if not form.is_valid():
        raise RejectedInput(" ".join(str(e) for errs in form.errors.values() for e in errs))
    review = parse_review_query(form.cleaned_data.get("q", ""))
    qs = scores.narrow_by_scores(conversation_list.filtered_conversations(tenant, form.filters()), tenant, review)
    if review.text:
        found = ranked_conversation_ids(tenant, review.text)
        allowed = set(qs.filter(pk__in=found.ids).values_list("pk", flat=True))
        return [pk for pk in found.ids if pk in allowed][:limit]
    if review.sort:
        return scores.sorted_by_score(qs, tenant, review, limit)
    sort = conversation_list.SORTS[form.sort_key()]
    prefix = "-" if sort.descending else ""
    return list(qs.order_by(f"{prefix}{sort.field}", f"{prefix}pk").values_list("pk", flat=True)[:limit])
