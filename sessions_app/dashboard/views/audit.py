"""Operator pages over the replay audit: repairs across the tenant, the audit event log (and CSV), one run."""

from typing import Any

from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from sessions_app.audit import listing as audit_listing
from sessions_app.core import paging
from sessions_app.dashboard.forms import AuditEventFilterForm, ResolveWaitForm
from sessions_app.dashboard.history import wants_fragment
from sessions_app.models import Run
from sessions_app.tenancy.permissions import Action, MemberRequest, get_run_for_member, member_view


@require_GET
@member_view(Action.VIEW_REPAIRS)
def repairs(request: MemberRequest) -> HttpResponse:
    return render(request, "repairs.html", {"section": "repairs", "rows": audit_listing.repair_rows(request.tenant)})


def _event_form(request: MemberRequest) -> AuditEventFilterForm:
    return AuditEventFilterForm(request.GET, classes=audit_listing.event_classes())


@require_GET
@member_view(Action.VIEW_AUDIT)
def audit_events(request: MemberRequest) -> HttpResponse:
    form = _event_form(request)
    context: dict[str, Any] = {"section": "audit", "form": form, "events": [], "next_cursor": None}
    if not form.is_valid():
        return render(request, "audit_events.html", context, status=400)
    try:
        events, next_cursor = audit_listing.event_page(
            request.tenant, form.filters(), form.cleaned_data.get("cursor") or None
        )
    except paging.BadCursor as error:
        context["error"] = str(error)
        return render(request, "audit_events.html", context, status=400)
    params = request.GET.copy()
    params.pop("cursor", None)
    context.update(
        events=events,
        places=audit_listing.event_places(request.tenant, events),
        next_cursor=next_cursor,
        query_without_cursor=params.urlencode(),
    )
    if wants_fragment(request) and form.cleaned_data.get("cursor"):
        return render(request, "audit_events.html#event-rows", context)
    return render(request, "audit_events.html", context)


@require_GET
@member_view(Action.VIEW_AUDIT)
def audit_events_csv(request: MemberRequest) -> HttpResponseBase:
    form = _event_form(request)
    if not form.is_valid():
        return HttpResponse("Invalid filter: " + form.errors.as_text(), status=400, content_type="text/plain")
    response = StreamingHttpResponse(
        audit_listing.events_csv(request.tenant, form.filters()), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="audit-events-{request.tenant.slug}.csv"'
    return response


def run_audit_page(
    request: MemberRequest, run: Run, resolve_form: ResolveWaitForm | None = None, status: int = 200
) -> HttpResponse:
    return render(
        request,
        "run_audit.html",
        {
            "section": "audit",
            "audit": audit_listing.run_audit(request.tenant, run),
            "run": run,
            "resolve_form": resolve_form or ResolveWaitForm(),
        },
        status=status,
    )


@require_GET
@member_view(Action.VIEW_AUDIT)
def run_audit(request: MemberRequest, run_id: str) -> HttpResponse:
    return run_audit_page(request, get_run_for_member(request, run_id))
