"""Links a colleague can open: tenant permalinks (through the login, switching tenant), and read-only share
links for one conversation (admin policy, off by default; opened without a session, redaction applied, no
reveal, every view audited)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from input_errors import RejectedInput
from sessions_app.dashboard.ids import conversation_url
from sessions_app.dashboard.settings_form import settings_page
from sessions_app.dashboard.transcript_html import RenderOptions, render_messages
from sessions_app.review import share_links
from sessions_app.tenancy.permissions import (
    Action,
    MemberRequest,
    get_conversation_for_member,
    member_view,
    switch_tenant,
)
from sessions_app.transcripts.masking import masker_for
from sessions_app.transcripts.reading import read_window, window_start_for

PERMALINK_PAGES = ("c/", "r/", "search/", "queues/")


@require_GET
@login_required
def permalink(request: HttpRequest, tenant_slug: str, rest: str) -> HttpResponseBase:
    """`/l/<tenant>/<page>`: make the tenant current when the reader belongs to it, then open the page (which
    answers 404 with a switch offer, or 403, by its own rules when they do not)."""
    target = "/" + rest
    if not rest.startswith(PERMALINK_PAGES) or not url_has_allowed_host_and_scheme(target, allowed_hosts=None):
        return render(request, "404.html", {"switch_to": []}, status=404)
    switch_tenant(request, tenant_slug)
    query = request.META.get("QUERY_STRING", "")
    return HttpResponseRedirect(f"{target}?{query}" if query else target)


@require_http_methods(["GET", "POST"])
@member_view(Action.MANAGE_SHARE_LINKS)
def share_policy(request: MemberRequest) -> HttpResponse:
    def save() -> str:
        try:
            days = int(request.POST.get("days", "7"))
        except ValueError:
            raise RejectedInput("The number of days is a whole number.") from None
        share_links.set_policy(
            request.tenant, enabled=request.POST.get("enabled") == "1", days=days, actor=request.user
        )
        return "Share-link policy saved."

    return settings_page(
        request,
        template="review_share_policy.html",
        tab="sharing",
        save=save,
        context=lambda: {"policy": share_links.policy(request.tenant)},
    )


@require_POST
@member_view(Action.MANAGE_SHARE_LINKS)
def create_share_link(request: MemberRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation_for_member(request, conversation_id)
    try:
        link, token = share_links.create_link(request.tenant, conversation, actor=request.user)
    except RejectedInput as refused:
        return render(request, "review_refused.html", {"error": refused.message}, status=refused.status)
    # The link is shown once, on this answer (not kept in a message or the session).
    url = request.build_absolute_uri(f"/s/{token}/")
    return render(
        request,
        "review_share_created.html",
        {"section": "conversations", "conversation": conversation, "link": link, "url": url},
    )


@require_POST
@member_view(Action.MANAGE_SHARE_LINKS)
def revoke_share_link(request: MemberRequest, pk: int) -> HttpResponseBase:
    link = share_links.revoke_link(request.tenant, pk, actor=request.user)
    messages.success(request, "Share link revoked.")
    return HttpResponseRedirect(conversation_url(link.conversation.external_id) + "#review")


@never_cache
@require_GET
def shared_conversation(request: HttpRequest, token: str) -> HttpResponse:
    """A shared conversation, read-only, for anyone holding a valid token: masked, no reveal, no other page."""
    try:
        opened = share_links.open_link(token, viewer="share-link")
    except RejectedInput as refused:
        return render(request, "review_share_refused.html", {"error": refused.message}, status=refused.status)
    try:
        start = window_start_for(max(0, int(request.GET.get("start", "0"))))
    except ValueError:
        start = 0
    conversation = opened.conversation
    window = read_window(conversation, start, mask=masker_for(conversation.tenant))
    html = render_messages(window.messages, RenderOptions(conversation_pk=conversation.pk))
    response = render(
        request,
        "review_shared.html",
        {"conversation": conversation, "window": window, "rendered_messages": html, "link": opened.link},
    )
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"
    return response
