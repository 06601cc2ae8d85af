"""Scores, comments and mentions on a conversation's page, the inbox of mentions, comment search, and the
admin's score names. Each view is thin: parse, call one review service, redirect back (POST-redirect-GET)."""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpResponse, HttpResponseBase, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from input_errors import RejectedInput
from sessions_app.audit.events import record
from sessions_app.audit.vocabulary import EventClass
from sessions_app.dashboard.ids import conversation_url
from sessions_app.dashboard.settings_form import settings_page
from sessions_app.models import Conversation, ReviewItem, Tenant
from sessions_app.review import comments, scores, share_links
from sessions_app.review import export as review_export
from sessions_app.review.score_values import ScoreKind, ScoreShape
from sessions_app.review.targets import Target, target_of
from sessions_app.tenancy.permissions import (
    Action,
    MemberRequest,
    get_conversation_for_member,
    member_view,
)
from sessions_app.tenancy.scoping import scoped


def author_of(request: MemberRequest) -> str:
    """How a member is recorded as a score's author (a key is `api-key:<prefix>`)."""
    return f"user:{request.user.get_username()}"


def review_panel(request: MemberRequest, conversation: Conversation) -> dict[str, Any]:
    """What the conversation page shows of scores, comments and links (added to its context)."""
    tenant = request.tenant
    context: dict[str, Any] = {
        "review_scores": scores.scores_of(tenant, [conversation.pk])[conversation.pk],
        "review_definitions": scores.definitions(tenant),
        "review_comments": comments.comments_on(tenant, conversation),
        "review_permalink": permalink(tenant, conversation_url(conversation.external_id)),
    }
    item_pk = request.GET.get("review_item", "")
    if item_pk.isdigit():
        items = scoped(ReviewItem, tenant).filter(conversation=conversation, queue__tenant=tenant)
        items = items.select_related("queue")
        context["review_item"] = items.filter(pk=int(item_pk)).first()
    if Action.MANAGE_SHARE_LINKS in request.grants:
        context["share_policy"] = share_links.policy(tenant)
        context["share_links"] = share_links.links_of(tenant, conversation)
    return context


def permalink(tenant: Tenant, path: str) -> str:
    """A link that opens `path` in `tenant` for whoever is a member there: it survives the login (the login
    returns to it) and switches the reader's current tenant first."""
    return f"/l/{tenant.slug}{path}"


def _target(request: MemberRequest) -> Target:
    position = request.POST.get("position", "").strip()
    if position and not position.isdigit():
        raise RejectedInput("A message position is a whole number.")
    return target_of(request.POST.get("run_id", "").strip(), int(position) if position else None)


def _back(conversation: Conversation, request: MemberRequest) -> HttpResponseRedirect:
    """Back where the mark was made: the message, or the review panel (still showing the queue item in review)."""
    url = conversation_url(conversation.external_id)
    position = request.POST.get("position", "").strip()
    if position.isdigit():
        return HttpResponseRedirect(f"{url}?at={position}#m-{position}")
    item = request.POST.get("review_item", "").strip()
    return HttpResponseRedirect(f"{url}?review_item={item}#review" if item.isdigit() else f"{url}#review")


def _refused(request: MemberRequest, error: RejectedInput) -> HttpResponse:
    return render(request, "review_refused.html", {"error": error.message}, status=error.status)


def _refused_on_page(request: MemberRequest, error: RejectedInput, url: str) -> HttpResponseBase:
    """Someone else's comment (every member may comment, only its author edits it): back to the page with the
    reason, nothing changed. Refused text is a 400 page as elsewhere."""
    if error.status == 403:
        messages.error(request, error.message)
        return HttpResponseRedirect(url)
    return _refused(request, error)


def _mark(
    request: MemberRequest, conversation_id: str, write: Callable[[Conversation, Target], object], done: str
) -> HttpResponseBase:
    """A score or comment on the conversation, one of its runs or a message: written, or refused with the reason."""
    conversation = get_conversation_for_member(request, conversation_id)
    try:
        write(conversation, _target(request))
    except RejectedInput as error:
        return _refused(request, error)
    messages.success(request, done)
    return _back(conversation, request)


@require_POST
@member_view(Action.SCORE_AND_COMMENT)
def set_score(request: MemberRequest, conversation_id: str) -> HttpResponseBase:
    name, value = request.POST.get("name", ""), request.POST.get("value", "")
    return _mark(
        request,
        conversation_id,
        lambda conversation, target: scores.set_score(
            request.tenant, conversation, target, name, value, author=author_of(request)
        ),
        "Score saved.",
    )


@require_POST
@member_view(Action.SCORE_AND_COMMENT)
def add_comment(request: MemberRequest, conversation_id: str) -> HttpResponseBase:
    body = request.POST.get("body", "")
    return _mark(
        request,
        conversation_id,
        lambda conversation, target: comments.add_comment(
            request.tenant, conversation, target, body, author=request.user
        ),
        "Comment added.",
    )


@require_POST
@member_view(Action.SCORE_AND_COMMENT)
def edit_comment(request: MemberRequest, pk: int) -> HttpResponseBase:
    comment = comments.comment_for(request.tenant, pk)
    url = f"{conversation_url(comment.conversation.external_id)}#comment-{comment.pk}"
    try:
        comments.edit_comment(request.tenant, comment, request.POST.get("body", ""), editor=request.user)
    except RejectedInput as error:
        return _refused_on_page(request, error, url)
    messages.success(request, "Comment edited; the earlier text is kept.")
    return HttpResponseRedirect(url)


@require_POST
@member_view(Action.SCORE_AND_COMMENT)
def delete_comment(request: MemberRequest, pk: int) -> HttpResponseBase:
    comment = comments.comment_for(request.tenant, pk)
    url = conversation_url(comment.conversation.external_id) + "#review"
    try:
        comments.delete_comment(request.tenant, comment, actor=request.user, actor_role=request.membership.role)
    except RejectedInput as error:
        return _refused_on_page(request, error, url)
    messages.success(request, "Comment deleted.")
    return HttpResponseRedirect(url)


@require_http_methods(["GET", "POST"])
@member_view(Action.READ_CONVERSATIONS)
def inbox(request: MemberRequest) -> HttpResponse:
    """The mentions of the signed-in member in the current tenant; POST marks them read."""
    if request.method == "POST":
        comments.mark_read(request.tenant, request.user)
        return HttpResponseRedirect("/inbox/")
    mentions = list(comments.inbox(request.tenant, request.user)[:100])
    return render(request, "review_inbox.html", {"section": "inbox", "mentions": mentions})


@require_GET
@member_view(Action.SEARCH)
def comment_search(request: MemberRequest) -> HttpResponse:
    """Comment text, for members: a path of its own, apart from the transcript index agents and keys search."""
    query = request.GET.get("q", "")[:500]
    found = comments.search_comments(request.tenant, query)
    return render(request, "review_comment_search.html", {"section": "search", "q": query, "found": found})


@require_http_methods(["GET", "POST"])
@member_view(Action.MANAGE_SCORE_NAMES)
def score_names(request: MemberRequest) -> HttpResponse:
    def save() -> str:
        shape = _shape(request)
        scores.define_score(request.tenant, shape, actor=request.user.get_username())
        return f"Score {shape.name!r} defined."

    return settings_page(
        request,
        template="review_score_names.html",
        tab="scores",
        save=save,
        context=lambda: {"definitions": scores.definitions(request.tenant)},
    )


def _number(request: MemberRequest, name: str) -> float | None:
    raw = request.POST.get(name, "").strip()
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise RejectedInput(f"The {name} is a number.") from None


def _shape(request: MemberRequest) -> ScoreShape:
    kind = request.POST.get("kind", "")
    if kind not in set(ScoreKind):
        raise RejectedInput("Choose numeric, boolean or categorical.")
    categories = tuple(c.strip() for c in request.POST.get("categories", "").split(",") if c.strip())
    return ScoreShape(
        request.POST.get("name", "").strip(),
        ScoreKind(kind),
        _number(request, "minimum"),
        _number(request, "maximum"),
        categories,
    )


@require_GET
@member_view(Action.EXPORT)
def export_review(request: MemberRequest, conversation_id: str) -> JsonResponse:
    """The conversation's scores and comments, as separate fields, for an admin who asks; an audited export."""
    conversation = get_conversation_for_member(request, conversation_id)
    record(request.tenant, EventClass.EXPORT, actor=request.user, conversation=conversation)
    response = JsonResponse(review_export.review_document(request.tenant, conversation))
    response["Content-Disposition"] = 'attachment; filename="review.json"'
    return response
