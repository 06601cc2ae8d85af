"""Search across the tenant as you type: results grouped by conversation, each hit opening in context."""

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from django.http import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from input_errors import RejectedInput
from sessions_app.dashboard import search_access
from sessions_app.dashboard.forms import SearchForm
from sessions_app.dashboard.history import go_to, wants_fragment
from sessions_app.dashboard.ids import url_for_pasted_id
from sessions_app.dashboard.query_notes import query_notes
from sessions_app.dashboard.typing_history import continues_typing
from sessions_app.models import Tenant
from sessions_app.review import listing as review_listing
from sessions_app.review import search_marks
from sessions_app.review.score_filters import ReviewQuery, parse_review_query
from sessions_app.tenancy.permissions import Action, MemberRequest, member_view, role_allows


def _all_tenants(request: MemberRequest) -> list[Tenant] | None:
    """Every tenant the person may read conversations in (only their own memberships), when more than one."""
    tenants = [m.tenant for m in request.memberships if role_allows(m.role, Action.READ_CONVERSATIONS)]
    return tenants if len(tenants) > 1 else None


def _page_links(request: MemberRequest, outcome: search_access.SearchOutcome) -> dict[str, str]:
    """The next page (the query as searched, with its cursor) and, past the first page, the first page."""
    links = {}
    params = request.GET.copy()
    params.pop("cursor", None)
    if outcome.offset:
        links["first_url"] = f"{reverse('search')}?{params.urlencode()}"
    if outcome.next_cursor:
        params["q"] = outcome.query
        params["cursor"] = outcome.next_cursor
        links["next_url"] = f"{reverse('search')}?{params.urlencode()}"
    return links


def _still_typing(request: MemberRequest, form: SearchForm) -> bool:
    """A search whose words extend or shorten those of the search on screen, every other field the same: the
    same search still being typed (htmx names no field that sent it, so the fields themselves are compared)."""
    if not form.is_valid() or not request.htmx.current_url:
        return False
    shown = urlsplit(request.htmx.current_url)
    if shown.path != request.path:
        return False
    before = {key: values for key, values in parse_qs(shown.query).items() if values != [""]}
    now = {key: values for key, values in request.GET.lists() if values != [""]}
    words_before, words_now = before.pop("q", [""])[0], now.pop("q", [""])[0]
    return before == now and continues_typing(words_before, words_now)


@require_GET
@member_view(Action.SEARCH)
def search_page(request: MemberRequest) -> HttpResponseBase:
    form = SearchForm(request.GET)
    context: dict[str, Any] = {"section": "search", "form": form, "outcome": None}
    status = 200
    if form.is_valid() and (target := url_for_pasted_id(request.tenant, form.cleaned_data["q"])):
        return go_to(request, target)  # a pasted conversation or run id goes straight to it
    # Issue 27: score:/label: clauses narrow the hits; comments matching the text are listed beside them.
    review = ReviewQuery(text=form.cleaned_data["q"]) if form.is_valid() else ReviewQuery(text="")
    if form.is_valid():
        try:
            review = parse_review_query(form.cleaned_data["q"])
            review_listing.narrowed(request.tenant, review)
        except RejectedInput as error:
            context["review_error"] = error.message
            template = "search.html#results" if wants_fragment(request) else "search.html"
            return render(request, template, context, status=error.status)
        if not review.text and review.narrows:  # clauses alone: the list shows every conversation they select
            return go_to(request, f"{reverse('conversations')}?{urlencode({'q': form.cleaned_data['q']})}")
    if form.is_valid() and review.text.strip():
        context["outcome"] = search_access.search_grouped(
            request.tenant,
            review.text,
            role=form.cleaned_data.get("role") or "",
            since=form.since_dt(),
            until=form.until_dt(),
            typing=bool(request.htmx),
            conversation_id=form.cleaned_data.get("conversation") or "",
            tenants=_all_tenants(request) if form.cleaned_data.get("everywhere") else None,
            cursor=form.cleaned_data.get("cursor") or None,
        )
        context["review_notice"] = search_marks.narrow_hits(request.tenant, context["outcome"], review)
        context["comment_hits"] = search_marks.comment_hits(request.tenant, review.text)
        context.update(_page_links(request, context["outcome"]))
        context["query_notes"] = query_notes(form.cleaned_data["q"])
        context["several_tenants"] = bool(form.cleaned_data.get("everywhere")) and len(request.memberships) > 1
        if context["outcome"].error:
            status = 400
    elif not form.is_valid():
        status = 400
    if wants_fragment(request):
        response = render(request, "search.html#results", context, status=status)
        if _still_typing(request, form):
            response["HX-Replace-Url"] = request.get_full_path()  # overrides the form's hx-push-url
        return response
    return render(request, "search.html", context, status=status)
