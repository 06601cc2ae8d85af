"""Exports for admins: one conversation, or every conversation a filter selects, streamed; each one audited."""

from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import render
from django.utils.text import slugify
from django.views.decorators.http import require_GET

from sessions_app.audit.events import record
from sessions_app.audit.vocabulary import EventClass
from sessions_app.dashboard import conversation_list
from sessions_app.dashboard.forms import ConversationFilterForm
from sessions_app.tenancy.permissions import Action, MemberRequest, get_conversation_for_member, member_view
from sessions_app.transcripts import export


def _format(request: MemberRequest) -> str | None:
    fmt = request.GET.get("format", "json")
    return fmt if fmt in export.FORMATS else None


def _bad_format() -> HttpResponse:
    return HttpResponse(
        f"Unknown export format; use one of {', '.join(export.FORMATS)}.", status=400, content_type="text/plain"
    )


@require_GET
@member_view(Action.EXPORT)
def export_one(request: MemberRequest, conversation_id: str) -> HttpResponseBase:
    conversation = get_conversation_for_member(request, conversation_id)
    fmt = _format(request)
    if fmt is None:
        return _bad_format()
    record(request.tenant, EventClass.EXPORT, actor=request.user, conversation=conversation)
    response = StreamingHttpResponse(
        export.export_conversation(conversation, fmt), content_type=export.CONTENT_TYPES[fmt]
    )
    name = slugify(conversation.external_id)[:80] or f"conversation-{conversation.pk}"
    response["Content-Disposition"] = f'attachment; filename="{name}.{export.FILE_SUFFIXES[fmt]}"'
    return response


@require_GET
@member_view(Action.EXPORT)
def export_page(request: MemberRequest) -> HttpResponseBase:
    form = ConversationFilterForm(request.GET or None, agents=conversation_list.agent_names(request.tenant))
    count = None
    if form.is_bound and form.is_valid():
        count = conversation_list.filtered_conversations(request.tenant, form.filters()).count()
    return render(
        request,
        "export.html",
        {
            "section": "export",
            "form": form,
            "count": count,
            "formats": export.FORMATS,
            "query": request.GET.urlencode(),
        },
    )


@require_GET
@member_view(Action.EXPORT)
def export_many(request: MemberRequest) -> HttpResponseBase:
    """Every conversation the filter selects, streamed in id order (memory stays flat)."""
    fmt = _format(request)
    if fmt is None:
        return _bad_format()
    form = ConversationFilterForm(request.GET, agents=[])
    if not form.is_valid():
        return HttpResponse("Invalid filter: " + form.errors.as_text(), status=400, content_type="text/plain")
    qs = conversation_list.filtered_conversations(request.tenant, form.filters()).select_related("tenant")
    record(request.tenant, EventClass.EXPORT, actor=request.user)
    response = StreamingHttpResponse(
        export.export_conversations(qs.order_by("pk").iterator(chunk_size=200), fmt),
        content_type=export.CONTENT_TYPES[fmt],
    )
    response["Content-Disposition"] = (
        f'attachment; filename="{request.tenant.slug}-conversations.{export.FILE_SUFFIXES[fmt]}"'
    )
    return response
