"""An admin settings page that saves on POST (score names, the share-link policy): one shape for all of them."""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from input_errors import RejectedInput
from sessions_app.tenancy.permissions import MemberRequest


def settings_page(
    request: MemberRequest,
    *,
    template: str,
    tab: str,
    save: Callable[[], str],
    context: Callable[[], dict[str, Any]],
) -> HttpResponse:
    """On POST `save` makes the change and returns what to tell the admin, who is sent back to the page (GET);
    a refusal (RejectedInput) shows the page again with its reason, answering 400. `context` is read after the
    save, so the page shows what is stored."""
    error = ""
    if request.method == "POST":
        try:
            done = save()
        except RejectedInput as refused:
            error = refused.message
        else:
            messages.success(request, done)
            return HttpResponseRedirect(request.path)
    return render(
        request,
        template,
        {"section": "admin", "tab": tab, **context(), "error": error},
        status=400 if error else 200,
    )
