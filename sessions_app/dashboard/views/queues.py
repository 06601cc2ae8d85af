"""Review queues: operators fill them from a list filter URL, a saved view or a search; reviewers (support and up)
take the next item, score and comment it on the conversation page, and mark it done."""

from django.contrib import messages
from django.http import HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from input_errors import RejectedInput
from sessions_app.dashboard import saved_views
from sessions_app.dashboard.filter_urls import conversations_for, saved_view_source
from sessions_app.dashboard.ids import conversation_url
from sessions_app.models import ReviewItem, ReviewQueue
from sessions_app.review import queues
from sessions_app.tenancy.permissions import Action, MemberRequest, member_view
from sessions_app.tenancy.scoping import get_scoped_or_404


def _item_url(item: ReviewItem) -> str:
    return f"{conversation_url(item.conversation.external_id)}?review_item={item.pk}#review"


def _view_source(request: MemberRequest, view: str) -> str:
    """The list filter URL of the tenant's saved view `view` (its pk), which the queue records as its source."""
    found = saved_view_source(request.tenant, f"/views/{view}/") if view.isdigit() else None
    if found is None:
        raise RejectedInput("Choose one of this tenant's saved views.")
    return saved_views.list_url(found)


def _queue_list(request: MemberRequest, *, error: str = "", source: str = "") -> HttpResponse:
    rows = [(queue, queues.progress(request.tenant, queue)) for queue in queues.queues(request.tenant)]
    views = saved_views.views_of(request.tenant) if Action.MANAGE_QUEUES in request.grants else []
    return render(
        request,
        "review_queues.html",
        {"section": "queues", "rows": rows, "error": error, "source": source, "queue_views": views},
        status=400 if error else 200,
    )


@require_GET
@member_view(Action.REVIEW_QUEUE_ITEMS)
def queue_list(request: MemberRequest) -> HttpResponse:
    """Every queue with its progress; `?source=` pre-fills an operator's form (the list's "review these")."""
    return _queue_list(request, source=request.GET.get("source", "")[:2000])


@require_POST
@member_view(Action.MANAGE_QUEUES)
def create_queue(request: MemberRequest) -> HttpResponse:
    source = request.POST.get("source", "")
    try:
        if view := request.POST.get("view", "").strip():
            source = _view_source(request, view)
        queue = queues.create_queue(
            request.tenant, request.POST.get("name", ""), source, actor=request.user, select=conversations_for
        )
    except RejectedInput as refused:
        return _queue_list(request, error=refused.message, source=source[:2000])
    messages.success(request, f"Queue {queue.name!r} filled.")
    return HttpResponseRedirect(f"/queues/{queue.pk}/")


@require_GET
@member_view(Action.REVIEW_QUEUE_ITEMS)
def queue_page(request: MemberRequest, pk: int) -> HttpResponse:
    queue = get_scoped_or_404(ReviewQueue, request.tenant, pk=pk)
    items = [(item, _item_url(item)) for item in queues.items_of(request.tenant, queue)]
    return render(
        request,
        "review_queue.html",
        {"section": "queues", "queue": queue, "items": items, "progress": queues.progress(request.tenant, queue)},
    )


@require_POST
@member_view(Action.REVIEW_QUEUE_ITEMS)
def take_next(request: MemberRequest, pk: int) -> HttpResponseBase:
    queue = get_scoped_or_404(ReviewQueue, request.tenant, pk=pk)
    item = queues.take_next(request.tenant, queue, request.user)
    if item is None:
        messages.success(request, "Nothing left to review in this queue.")
        return HttpResponseRedirect(f"/queues/{queue.pk}/")
    return HttpResponseRedirect(_item_url(item))


@require_POST
@member_view(Action.REVIEW_QUEUE_ITEMS)
def item_done(request: MemberRequest, pk: int) -> HttpResponseBase:
    item = get_scoped_or_404(ReviewItem, request.tenant, pk=pk)
    try:
        queues.mark_done(request.tenant, item, request.user)
    except RejectedInput as refused:
        return render(request, "review_refused.html", {"error": refused.message}, status=refused.status)
    if request.POST.get("next"):
        return take_next(request, item.queue_id)
    return HttpResponseRedirect(f"/queues/{item.queue_id}/")
