"""The tenant overview: activity per day over a chosen range, as SVG charts with their numbers as tables."""

from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from sessions_app.audit.service import refresh_tenant_verdicts
from sessions_app.dashboard.forms import OverviewRangeForm
from sessions_app.dashboard.overview import tenant_overview
from sessions_app.tenancy.permissions import Action, MemberRequest, member_view


@require_GET
@member_view(Action.READ_CONVERSATIONS)
def overview_page(request: MemberRequest) -> HttpResponse:
    form = OverviewRangeForm(request.GET, today=timezone.now().date())
    context: dict[str, Any] = {"section": "overview", "form": form}
    if not form.is_valid():
        return render(request, "overview.html", context, status=400)
    refresh_tenant_verdicts(request.tenant)  # a run gone quiet is counted STUCK
    context["overview"] = tenant_overview(request.tenant, *form.days())
    context["base_url"] = request.build_absolute_uri("/").rstrip("/")  # the onboarding panel's real URLs
    return render(request, "overview.html", context)
